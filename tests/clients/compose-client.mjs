// Federation 2 composition of subgraphs into a supergraph, by @apollo/composition's composeServices (what Rover and
// IntrospectAndCompose run).
//
//   node compose-client.mjs '{"subgraphs": [{"name": "svc", "url": "http://127.0.0.1:P/graphql", "sdl": "..." | null},
//                                           ...], "timeout_ms": 20000}'
//
// A subgraph without `sdl` has it fetched from its url as `{ _service { sdl } }` (a POST), as a gateway would.
// Prints one JSON object a line: {"hint": {"code": "...", "message": "..."}} per composition hint, then
// {"supergraph": "<supergraph SDL>"} (exit 0); or, when composition fails, {"errors": [{"code": "...", "message":
// "..."}, ...]} (exit 1); an SDL that does not parse is such an error, with code INVALID_GRAPHQL and the subgraph's
// name in brackets at the start of the message, as composition writes its own. Other failures (a _service fetch that
// fails or answers errors): {"error": ...} (exit 1); {"error": {"timeout": true}} (exit 2).
import { composeServices } from "@apollo/composition";
import { parse } from "graphql";

import { args, emit, finish, parsed, start } from "./output.mjs";

const fail = start((err) => ({
  message: err?.message ?? String(err),
  name: err?.name,
  cause: err?.cause?.message,
  subgraph: err?.subgraph,
  status: err?.status,
  body: err?.body,
}));

async function fetchSdl({ name, url }) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query: "{ _service { sdl } }" }),
  });
  const body = parsed(await response.text());
  const sdl = body?.data?._service?.sdl;
  if (!response.ok || typeof sdl !== "string") {
    throw Object.assign(new Error(`no SDL from ${url}`), { subgraph: name, status: response.status, body });
  }
  return sdl;
}

try {
  const services = [];
  const errors = [];
  for (const subgraph of args.subgraphs) {
    const sdl = subgraph.sdl ?? (await fetchSdl(subgraph));
    try {
      services.push({ name: subgraph.name, url: subgraph.url, typeDefs: parse(sdl) });
    } catch (err) {
      errors.push({ code: "INVALID_GRAPHQL", message: `[${subgraph.name}] ${err.message}` });
    }
  }
  if (errors.length) {
    emit({ errors });
    finish(1);
  } else {
    const result = composeServices(services);
    if (result.errors) {
      emit({ errors: result.errors.map((e) => ({ code: e.extensions?.code ?? null, message: e.message })) });
      finish(1);
    } else {
      for (const hint of result.hints) emit({ hint: { code: hint.definition.code, message: hint.message } });
      emit({ supergraph: result.supergraphSdl });
      finish(0);
    }
  }
} catch (err) {
  await fail(err);
}
