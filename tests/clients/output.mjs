// What the client scripts share: their arguments, one JSON object a line on stdout, and how they exit.
//
// `start(describe)` reads the arguments (one JSON object, argv[2]), arms the overall timeout ({"error": {"timeout":
// true}}, exit 2), and turns anything thrown or rejected into {"error": describe(err)} and exit 1. A script for which
// running out the clock is the normal end (a stub server) passes its own `onTimeout`.

export const args = JSON.parse(process.argv[2] ?? "{}");

let finished = false;

export function emit(obj) {
  if (!finished) process.stdout.write(JSON.stringify(obj) + "\n");
}

// Exit only once stdout is drained, so the test sees every line written before the exit. The first outcome wins:
// what fails while we stop (an aborted request, a closing socket) is not news and is not printed.
export function finish(code) {
  if (finished) return;
  finished = true;
  process.stdout.write("", () => process.exit(code));
}

export function start(describe, { onTimeout = () => (emit({ error: { timeout: true } }), finish(2)) } = {}) {
  const fail = async (err) => (emit({ error: await describe(err) }), finish(1));
  process.on("uncaughtException", fail);
  process.on("unhandledRejection", fail);
  setTimeout(onTimeout, args.timeout_ms ?? 20000);
  return fail;
}

// A body as JSON when it is JSON, else as the text it is.
export function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
