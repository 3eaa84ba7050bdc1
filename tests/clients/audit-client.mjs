// The GraphQL over HTTP conformance audits of graphql-http (the spec's reference implementation), run in order.
//
//   node audit-client.mjs '{"url": "http://127.0.0.1:P/graphql", "headers": {...} | null, "timeout_ms": 20000}'
//
// Prints one JSON object a line: {"audit": {"id": "4655", "name": "MUST ...", "status": "ok"}} per audit, where a
// failing one has status "error" (a MUST), "warn" (a SHOULD) or "notice" (a MAY), a "reason", and the "response" it
// judged ({"status": S, "contentType": "...", "body": json-or-text}, or null when the audit threw before one); then
// {"summary": {"ok": n, "warn": n, "error": n, "notice": n}} and exit 0, whatever the audits found. An audit that
// throws (graphql-http's "fatal": no response, a body it cannot parse) counts as an error with the thrown message as
// its reason. Failures of the script itself: {"error": ...} (exit 1); {"error": {"timeout": true}} (exit 2).
//
// `headers` go on every request (e.g. authorization) unless the audit sets that header itself.
import { serverAudits } from "graphql-http";

import { args, emit, finish, parsed, start } from "./output.mjs";

const fail = start((err) => ({ message: err?.message ?? String(err), name: err?.name, cause: err?.cause?.message }));

// The audits read the body themselves, so keep its text on the side, keyed by the Response fetchFn hands them.
const bodies = new WeakMap();
const NULL_BODY = new Set([101, 204, 205, 304]);

async function fetchFn(input, init = {}) {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(args.headers ?? {})) if (!headers.has(name)) headers.set(name, value);
  const original = await fetch(input, { ...init, headers });
  const text = await original.text();
  const response = new Response(NULL_BODY.has(original.status) ? null : text, {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
  bodies.set(response, text);
  return response;
}

// The audits hand back either the Response fetchFn made or a clone of it (taken before they read the body).
async function judged(response) {
  if (!response) return null;
  const text = bodies.get(response) ?? (response.bodyUsed ? "" : await response.text());
  return { status: response.status, contentType: response.headers.get("content-type"), body: parsed(text) };
}

const summary = { ok: 0, warn: 0, error: 0, notice: 0 };
try {
  for (const audit of serverAudits({ url: args.url, fetchFn })) {
    let result;
    try {
      result = await audit.fn();
    } catch (err) {
      result = { id: audit.id, name: audit.name, status: "error", reason: `threw: ${err?.message ?? String(err)}` };
    }
    const line = { id: result.id, name: result.name, status: result.status };
    if (result.status !== "ok") Object.assign(line, { reason: result.reason, response: await judged(result.response) });
    summary[result.status] = (summary[result.status] ?? 0) + 1;
    emit({ audit: line });
  }
  emit({ summary });
  finish(0);
} catch (err) {
  await fail(err);
}
