// One GraphQL subscription over Server-Sent Events, driven by graphql-sse's own client in distinct connections mode.
//
//   node sse-client.mjs '{"url": "http://127.0.0.1:P/graphql/stream", "query": "...", "variables": {},
//                         "operationName": null, "headers": {...} | null, "take": N | null, "timeout_ms": 20000}'
//
// Prints one JSON object a line: {"ready": true} once the stream's response headers arrived, {"next": payload} per
// `next` event, then {"complete": true} (exit 0) on the `complete` event, or {"error": ...} (exit 1) and
// {"error": {"timeout": true}} (exit 2). After `take` results it aborts the request itself and exits 0.
import { createClient } from "graphql-sse";

import { args, emit, finish, parsed, start } from "./output.mjs";

// The client rejects with a NetworkError (carrying the Response when the server answered other than 2xx, whose body
// the client never reads: we read it here, since that is where the server's errors are) or a plain Error.
async function describe(err) {
  const described = { message: err?.message ?? String(err), name: err?.name };
  const response = err?.response;
  if (response) {
    described.status = response.status;
    described.body = parsed(await response.text().catch(() => ""));
  }
  return described;
}

const fail = start(describe);

const client = createClient({
  url: args.url,
  // Distinct connections mode: one POST with `accept: text/event-stream` per operation, no reservation token.
  singleConnection: false,
  // No retries: a test wants to see the first failure, not a reconnect loop hiding it.
  retryAttempts: 0,
  headers: args.headers ?? {},
  on: { connected: () => emit({ ready: true }) },
});

const take = args.take ?? null;
let seen = 0;
const results = client.iterate({
  query: args.query,
  variables: args.variables ?? undefined,
  operationName: args.operationName ?? undefined,
  extensions: args.extensions ?? undefined,
});
try {
  for await (const payload of results) {
    emit({ next: payload });
    // Leaving the loop calls results.return(), which aborts the request: the server sees the connection close.
    if (take !== null && ++seen >= take) break;
  }
  if (take === null || seen < take) emit({ complete: true });
  client.dispose();
  finish(0);
} catch (err) {
  await fail(err);
}
