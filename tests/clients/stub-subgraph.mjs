// A stub Federation 2 subgraph: @apollo/subgraph's buildSubgraphSchema served by @apollo/server on 127.0.0.1, the
// other side of a federation test (composition, a gateway's _service { sdl } and _entities).
//
//   node stub-subgraph.mjs '{"port": 0, "typeDefs": "extend schema @link(...) type Product @key(fields: \"id\") {...}",
//                            "entities": {"Product": {"1": {"price": 5}}}, "root": {"topProducts": [...]} | null,
//                            "timeout_ms": 60000}'
//
// `typeDefs` is the subgraph's SDL (it must `extend schema @link(url: "https://specs.apollo.dev/federation/v2.x",
// import: [...])` to be a Federation 2 subgraph). Each type named in `entities` resolves a reference by its `id` key
// field: the entity under String(id) in the map, with the reference's own fields under it; an id not in the map
// resolves to null. `root` is the root value, so the Query fields answer what it holds under their names (nothing
// else resolves: without `root` they are null). Apollo Server's defaults stay on, so it also answers automatic
// persisted queries (an in-memory cache) and introspection.
//
// Prints one JSON object a line: {"ready": true, "url": "http://127.0.0.1:P/"} once it listens (any path serves
// GraphQL), then nothing while it serves; it serves until killed, or until timeout_ms passed, when it prints
// {"stopped": true} and exits 0. Failures (a bad SDL, a port in use): {"error": ...} (exit 1).
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginInlineTraceDisabled } from "@apollo/server/plugin/disabled";
import { startStandaloneServer } from "@apollo/server/standalone";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";

import { args, emit, finish, start } from "./output.mjs";

const fail = start(
  (err) => ({ message: err?.message ?? String(err), name: err?.name, code: err?.code, errors: err?.errors }),
  { onTimeout: () => (emit({ stopped: true }), finish(0)) },
);

const resolvers = {};
for (const [typeName, byId] of Object.entries(args.entities ?? {})) {
  resolvers[typeName] = {
    __resolveReference: (reference) => {
      const entity = byId[String(reference.id)];
      return entity === undefined ? null : { ...reference, ...entity };
    },
  };
}

try {
  const server = new ApolloServer({
    schema: buildSubgraphSchema({ typeDefs: parse(args.typeDefs), resolvers }),
    rootValue: args.root ?? undefined,
    includeStacktraceInErrorResponses: false,
    // Apollo's logger writes to stdout (console.info), which is for our JSON lines only.
    logger: { debug() {}, info: console.error, warn: console.error, error: console.error },
    // No ftv1 traces in the responses (a subgraph enables them by default, and says so on the logger).
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  const { url } = await startStandaloneServer(server, { listen: { host: "127.0.0.1", port: args.port ?? 0 } });
  emit({ ready: true, url });
} catch (err) {
  await fail(err);
}
