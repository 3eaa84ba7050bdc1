// One GraphQL subscription over Apollo's multipart HTTP protocol (subscriptionSpec 1.0), read with meros.
//
//   node multipart-client.mjs '{"url": "http://127.0.0.1:P/graphql", "query": "...", "variables": {},
//                               "operationName": null, "headers": {...} | null, "take": N | null, "timeout_ms": 20000}'
//
// Prints one JSON object a line. Not multipart: {"status": S, "body": json-or-text} and exit 0 when S < 400, else 1.
// Multipart: {"status": S, "contentType": "..."} first, then {"part": json} per JSON part (heartbeats are {"part": {}})
// or {"rawPart": {"headers": {...}, "body": "..."}} for a part meros could not read as JSON, then {"end": true} (exit 0)
// after the closing delimiter or the end of the body. After `take` parts with a `payload` member it aborts the
// request and exits 0. Failures: {"error": ...} (exit 1); {"error": {"timeout": true}} (exit 2).
//
// meros/browser, not the package's default export: under Node that one reads an http.IncomingMessage, and given a
// fetch Response it finds no content-type header and hands the response back as "not multipart".
import { meros } from "meros/browser";

import { args, emit, finish, parsed, start } from "./output.mjs";

const fail = start((err) => ({ message: err?.message ?? String(err), name: err?.name, cause: err?.cause?.message }));

const controller = new AbortController();
const take = args.take ?? null;
let seen = 0;
try {
  const response = await fetch(args.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "multipart/mixed;subscriptionSpec=1.0, application/json",
      ...(args.headers ?? {}),
    },
    body: JSON.stringify({ query: args.query, variables: args.variables, operationName: args.operationName }),
    signal: controller.signal,
  });
  // meros hands back the Response itself when it is not a 2xx multipart body.
  const parts = await meros(response);
  if (parts === response) {
    emit({ status: response.status, body: parsed(await response.text()) });
    finish(response.status < 400 ? 0 : 1);
  } else {
    emit({ status: response.status, contentType: response.headers.get("content-type") });
    for await (const part of parts) {
      if (!part.json) {
        emit({ rawPart: { headers: part.headers, body: part.body } });
        continue;
      }
      emit({ part: part.body });
      // Heartbeats ({}) carry no payload and do not count.
      if (take !== null && part.body && typeof part.body === "object" && "payload" in part.body && ++seen >= take) {
        controller.abort();
        finish(0);
        break;
      }
    }
    if (take === null || seen < take) {
      emit({ end: true });
      finish(0);
    }
  }
} catch (err) {
  await fail(err);
}
