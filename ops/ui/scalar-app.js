// The Scalar page svc serves at /scalar: the API reference of the document whose URL the page carries in data-url
// (svc writes `openapi.path` there). Everything that would reach Scalar's own servers is off: the default fonts
// (its font host), telemetry, the developer toolbar (share/deploy to its cloud), the AI agent and MCP buttons.
// The API client stays: its requests go to the service the document describes.
const app = document.getElementById("app");
Scalar.createApiReference("#app", {
  url: new URL(app.dataset.url, window.location.href).href,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
});
