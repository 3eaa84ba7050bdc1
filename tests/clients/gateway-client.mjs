// A Federation 2 gateway over subgraphs: @apollo/gateway with IntrospectAndCompose (it reads each subgraph's
// `_service { sdl }`, composes, plans, and fetches entities through `_entities`) inside an @apollo/server, whose
// executeOperation runs the queries in process: no HTTP listener of its own, only its requests to the subgraphs.
//
//   node gateway-client.mjs '{"subgraphs": [{"name": "svc", "url": "http://127.0.0.1:P/graphql"}, ...],
//                             "queries": [{"query": "...", "variables": {...} | null, "operationName": null}, ...],
//                             "timeout_ms": 20000}'
//
// Prints one JSON object a line: {"result": {"data": ..., "errors": [...]}} per query, in order ("data" is null or
// absent and "errors" absent as the gateway answered: a query that does not validate against the supergraph has no
// "data"), then exit 0. A gateway that cannot start (a subgraph unreachable, _service failing, composition errors):
// {"error": {"message": "...", ...}} (exit 1), the composition errors' messages in the message as the gateway writes
// them; {"error": {"timeout": true}} (exit 2). The gateway's and server's logs go to stderr.
import { ApolloGateway, IntrospectAndCompose } from "@apollo/gateway";
import { ApolloServer } from "@apollo/server";

import { args, emit, finish, start } from "./output.mjs";

const fail = start((err) => ({
  message: err?.message ?? String(err),
  name: err?.name,
  cause: err?.cause?.message,
  errors: err?.errors?.map?.((e) => ({ message: e?.message, code: e?.extensions?.code })),
}));

// Apollo's default logger writes to stdout (console.info), which is for our JSON lines only.
const logger = {
  debug() {},
  info: (...m) => console.error(...m),
  warn: (...m) => console.error(...m),
  error: (...m) => console.error(...m),
};

try {
  const gateway = new ApolloGateway({
    supergraphSdl: new IntrospectAndCompose({ subgraphs: args.subgraphs.map(({ name, url }) => ({ name, url })) }),
    logger,
  });
  const server = new ApolloServer({ gateway, logger, includeStacktraceInErrorResponses: false });
  await server.start();
  for (const { query, variables, operationName } of args.queries) {
    const response = await server.executeOperation({
      query,
      variables: variables ?? undefined,
      operationName: operationName ?? undefined,
    });
    if (response.body.kind !== "single") throw new Error(`an incremental response (${response.body.kind}): ${query}`);
    const { data, errors } = response.body.singleResult;
    emit({ result: { data, errors } });
  }
  await server.stop();
  finish(0);
} catch (err) {
  await fail(err);
}
