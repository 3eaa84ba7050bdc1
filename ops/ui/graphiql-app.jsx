// The GraphiQL page svc serves at /graphiql: GraphiQL 5 with Monaco's workers served by svc itself (no CDN).
// build.mjs bundles this file into one IIFE script and one stylesheet; __SVC_WORKERS__ holds the workers' file names.
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import { GraphiQL } from "graphiql";
import "graphiql/style.css";
import "./page.css";
import { createClient } from "graphql-ws";
import { createRoot } from "react-dom/client";

// Workers sit beside this script: resolve their names against its own URL, which also works behind a path prefix.
const scriptUrl = document.currentScript.src;
const workers = __SVC_WORKERS__;

globalThis.MonacoEnvironment = {
  getWorker(_workerId, label) {
    const name = label === "json" || label === "graphql" ? workers[label] : workers.editor;
    return new Worker(new URL(name, scriptUrl));
  },
};

// The endpoint is the page's sibling: /graphiql -> /graphql (and /prefix/graphiql -> /prefix/graphql).
const endpoint = new URL("graphql", window.location.href);
const socket = new URL(endpoint);
socket.protocol = endpoint.protocol === "https:" ? "wss:" : "ws:";

const fetcher = createGraphiQLFetcher({
  url: endpoint.href,
  // Subscriptions over graphql-transport-ws; lazy, so nothing connects until a subscription runs.
  wsClient: createClient({ url: socket.href, lazy: true, retryAttempts: 0 }),
});

createRoot(document.getElementById("graphiql")).render(<GraphiQL fetcher={fetcher} />);
