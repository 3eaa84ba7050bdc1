// Builds the UI pages svc serves into svc/http/ui/ (run by build.sh, with Node 22):
//   graphiql.html, graphiql/*.gz   GraphiQL 5: the app (JS + CSS + Monaco's codicon font) and Monaco's three workers
//   scalar.html, scalar/*.gz       Scalar's standalone API reference and the few lines that start it
// Every asset's name carries a hash of its content, so svc can let browsers cache it for a year. The output is
// deterministic: the same lock file gives byte-identical files (gzip level 9, no timestamp in the header).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "svc", "http", "ui");
const modules = join(here, "node_modules");

const common = {
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  write: false,
  outdir: "/out", // a name for esbuild's in-memory output paths; nothing is written there
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"' },
};

/** Build, then keep each output file's name and bytes (esbuild's hashed names). */
async function build(options) {
  const result = await esbuild.build({ ...common, ...options });
  return result.outputFiles.map((file) => ({ name: basename(file.path), contents: file.contents }));
}

// Monaco's workers first: the app must know their hashed names.
const workers = await build({
  entryPoints: {
    "editor.worker": join(modules, "monaco-editor/esm/vs/editor/editor.worker.js"),
    "json.worker": join(modules, "monaco-editor/esm/vs/language/json/json.worker.js"),
    "graphql.worker": join(modules, "monaco-graphql/esm/graphql.worker.js"),
  },
});
const workerNames = Object.fromEntries(workers.map(({ name }) => [name.split(".worker-")[0], name]));

const graphiql = await build({
  entryPoints: { "graphiql-app": join(here, "graphiql-app.jsx") },
  jsx: "automatic",
  loader: { ".ttf": "file" },
  define: { ...common.define, __SVC_WORKERS__: JSON.stringify(workerNames) },
});

// Scalar ships one self-contained script; copied as it is, under a hashed name like the others.
const standalone = readFileSync(join(modules, "@scalar/api-reference/dist/browser/standalone.js"));
const scalar = [
  { name: `standalone-${hash(standalone)}.js`, contents: standalone },
  ...(await build({ entryPoints: { "scalar-app": join(here, "scalar-app.js") } })),
];

for (const name of ["graphiql", "scalar", "graphiql.html", "scalar.html"]) {
  rmSync(join(out, name), { recursive: true, force: true });
}
writeUi("graphiql", [...graphiql, ...workers]);
writeUi("scalar", scalar);

function writeUi(ui, files) {
  mkdirSync(join(out, ui), { recursive: true });
  let page = readFileSync(join(here, `${ui}.html`), "utf8");
  for (const { name, contents } of files) {
    writeFileSync(join(out, ui, `${name}.gz`), gzipSync(contents, { level: 9 }));
    page = page.replace(`{{${name.replace(/-[A-Z0-9]+(\.[a-z]+)$/, "$1")}}}`, name);
    console.log(`svc/http/ui/${ui}/${name}.gz  ${contents.length} bytes`);
  }
  if (page.includes("{{")) throw new Error(`${ui}.html names a file the build did not make: ${page}`);
  writeFileSync(join(out, `${ui}.html`), page);
}

function hash(bytes) {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 8).toUpperCase();
}
