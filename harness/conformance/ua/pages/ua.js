// Helpers for the user-agent suite's fixture pages (served at /pages/ua.js).
window.ua = {
  // Runs fn() and reports how it ended: ["ok", value] or ["rejected", error name, message].
  async outcome(fn) {
    try {
      const value = await fn();
      return ["ok", value === undefined ? null : value];
    } catch (error) {
      return ["rejected", error?.name ?? String(error), error?.message ?? ""];
    }
  },
  // The names getTools() lists now.
  async names() {
    return (await document.modelContext.getTools()).map((tool) => tool.name);
  },
  sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  },
  // A minimal valid tool definition.
  tool(name, extra = {}) {
    return { name, description: `The ${name} tool.`, execute: () => "ok", ...extra };
  },
  // Counts how often each tool's execute ran, and what it was given.
  calls: {},
  inputs: {},
  counted(name, result = "ok") {
    return (input, options) => {
      window.ua.calls[name] = (window.ua.calls[name] || 0) + 1;
      window.ua.inputs[name] = input;
      window.ua.options = window.ua.options || {};
      window.ua.options[name] = options;
      return typeof result === "function" ? result(input, options) : result;
    };
  },
  events: [],
};
