// One GraphQL subscription over Server-Sent Events, driven by graphql-sse's own client in distinct connections mode.
//
//   node sse-client.mjs '{"url": "http://127.0.0.1:P/graphql/stream", "query": "...", "variables": {},
//                         "operationName": null, "headers": {...} | null, "take": N | null, "timeout_ms": 20000}'
//
// Prints one JSON object a line: {"ready": true} once the stream's response headers arrived, {"next": payload} per
// `next` event, then {"complete": true} (exit 0) on the `complete` event, or {"error": ...} (exit 1) and
// {"error": {"timeout": true}} (exit 2). After `take` results it aborts the request itself and exits 0.
import { createClient } from "graphql-sse";

const args = JSON.parse(process.argv[2] ?? "{}");

let finished = false;

function emit(obj) {
  if (!finished) process.stdout.write(JSON.stringify(obj) + "\n");
}

// Exit only once stdout is drained, so the test sees every line written before the exit. The first outcome wins:
// what fails while we stop (an aborted request, a closing socket) is not news and is not printed.
function finish(code) {
  if (finished) return;
  finished = true;
  process.stdout.write("", () => process.exit(code));
}

// The client rejects with a NetworkError (carrying the Response when the server answered other than 2xx, whose body
// the client never reads: we read it here, since that is where the server's errors are) or a plain Error.
async function describe(err) {
  const described = { message: err?.message ?? String(err), name: err?.name };
  const response = err?.response;
  if (response) {
    described.status = response.status;
    const text = await response.text().catch(() => "");
    try {
      described.body = JSON.parse(text);
    } catch {
      described.body = text;
    }
  }
  return described;
}

async function fail(err) {
  emit({ error: await describe(err) });
  finish(1);
}

process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);
setTimeout(() => (emit({ error: { timeout: true } }), finish(2)), args.timeout_ms ?? 20000);

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
