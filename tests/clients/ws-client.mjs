// One GraphQL subscription over WebSocket (graphql-transport-ws), driven by graphql-ws's own client.
//
//   node ws-client.mjs '{"url": "ws://127.0.0.1:P/graphql", "query": "...", "variables": {}, "operationName": null,
//                        "connectionParams": {...} | null, "take": N | null, "timeout_ms": 20000}'
//
// Prints one JSON object a line: {"ready": true} on connection_ack (again on every reconnect), {"next": payload} per
// result, then {"complete": true} (exit 0) when the server completes, or {"error": ...} (exit 1) and
// {"error": {"timeout": true}} (exit 2). After `take` results it completes the operation itself and exits 0.
import { createClient } from "graphql-ws";
import WebSocket from "ws";

import { args, emit, finish, start } from "./output.mjs";

// What the client rejects with: a CloseEvent, an array of GraphQL errors (an `error` message), or an Error/ErrorEvent.
function describe(err) {
  if (Array.isArray(err)) return { graphql: err };
  if (err && typeof err === "object" && "code" in err && "reason" in err) return { close: err.code, reason: err.reason };
  return { message: err?.message ?? String(err), name: err?.name ?? err?.constructor?.name };
}

const fail = start(describe);

let closed;
const socketClosed = new Promise((resolve) => (closed = resolve));
const client = createClient({
  url: args.url,
  webSocketImpl: WebSocket,
  lazy: true,
  // No retries: a test wants to see the first failure, not a reconnect loop hiding it.
  retryAttempts: 0,
  connectionParams: args.connectionParams ?? undefined,
  on: {
    connected: () => emit({ ready: true }),
    closed: (event) => closed(event),
  },
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
    // Leaving the loop calls results.return(): the client sends `complete` and, with no operation left, closes the
    // socket with 1000.
    if (take !== null && ++seen >= take) break;
  }
  if (take !== null && seen >= take) {
    // Wait (briefly) for the close handshake, so the server really sees both before we exit.
    await Promise.race([socketClosed, new Promise((resolve) => setTimeout(resolve, 2000))]);
  } else {
    emit({ complete: true });
  }
  finish(0);
} catch (err) {
  await fail(err);
}
