// One operation over Apollo's automatic persisted queries (APQ), sent twice by @apollo/client's own persisted-query
// link: the first client finds the hash unknown and registers the text, a second (fresh) client sends the hash alone.
//
//   node apq-client.mjs '{"url": "http://127.0.0.1:P/graphql", "query": "...", "variables": {},
//                         "useGETForHashedQueries": false, "timeout_ms": 20000}'
//
// Prints one JSON object a line, in the order things happen. Around every HTTP request the link makes:
// {"request": {"method": "POST", "url": "...", "body": json | null}} (null for a GET: the operation is in the url's
// query string), then {"response": {"status": S, "body": json-or-text}}. After the first run, with fetchPolicy
// "no-cache": {"result": {"data": ..., "errors": [...]}} ("errors" only when the server sent some); then the same for
// the second run, with a new client and fetchPolicy "network-only"; exit 0. A run that fails at the network level
// (e.g. a 4xx answer the link does not retry) ends in {"error": {"message", "graphQLErrors", "networkError":
// {"message", "statusCode", "result"}}} (exit 1); {"error": {"timeout": true}} (exit 2).
//
// The hash is the hex SHA-256 of the printed query (the link prints the document; it is not the text as given).
// A mutation is sent with client.mutate, anything else with client.query. @apollo/client 3.x has no "exports" map,
// so its modules are imported by file (…/index.js, the ESM build); nothing of React is loaded.
import { createHash } from "node:crypto";

import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client/core/index.js";
import { createPersistedQueryLink } from "@apollo/client/link/persisted-queries/index.js";

import { args, emit, finish, parsed, start } from "./output.mjs";

function describe(err) {
  const network = err?.networkError;
  return {
    message: err?.message ?? String(err),
    name: err?.name,
    graphQLErrors: err?.graphQLErrors?.length ? err.graphQLErrors : undefined,
    networkError: network
      ? {
          message: network.message,
          cause: network.cause?.message,
          statusCode: network.statusCode,
          result: network.result ?? network.bodyText,
        }
      : undefined,
  };
}

const fail = start(describe);

const NULL_BODY = new Set([101, 204, 205, 304]);

// The link's fetch: print what goes out and what comes back, and hand the link a Response with the same body.
async function loggedFetch(url, init = {}) {
  const body = typeof init.body === "string" ? parsed(init.body) : null;
  emit({ request: { method: init.method ?? "GET", url: String(url), body } });
  const original = await fetch(url, init);
  const text = await original.text();
  emit({ response: { status: original.status, body: parsed(text) } });
  return new Response(NULL_BODY.has(original.status) ? null : text, {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
}

// addTypename is deprecated in 3.14 (4.x always adds __typename) but still honoured; mute the warning it prints.
globalThis[Symbol.for("apollo.deprecations")] = true;

function client() {
  const persisted = createPersistedQueryLink({
    sha256: (text) => createHash("sha256").update(text).digest("hex"),
    useGETForHashedQueries: Boolean(args.useGETForHashedQueries),
  });
  return new ApolloClient({
    link: persisted.concat(new HttpLink({ uri: args.url, fetch: loggedFetch })),
    // No __typename added to the selections, so the results are what the query asked for.
    cache: new InMemoryCache({ addTypename: false }),
  });
}

const document = gql(args.query);
const isMutation = document.definitions.some((d) => d.kind === "OperationDefinition" && d.operation === "mutation");

async function run(fetchPolicy) {
  const options = { variables: args.variables ?? undefined, fetchPolicy, errorPolicy: "all" };
  const result = isMutation
    ? await client().mutate({ mutation: document, ...options, fetchPolicy: "no-cache" })
    : await client().query({ query: document, ...options });
  const line = { data: result.data ?? null };
  if (result.errors?.length) line.errors = result.errors;
  emit({ result: line });
}

try {
  await run("no-cache");
  await run("network-only");
  finish(0);
} catch (err) {
  await fail(err);
}
