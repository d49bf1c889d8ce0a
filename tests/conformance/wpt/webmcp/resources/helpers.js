// Helpers the fixture tests load (a support file: not a test).
window.sharedHelperLoaded = true;

// What a promise did within `ms`: "resolved: V", "rejected: Name", or "pending".
function settledWithin(ms, promise) {
  return Promise.race([
    promise.then((value) => `resolved: ${value}`, (error) => `rejected: ${error && error.name}`),
    new Promise((resolve) => setTimeout(() => resolve("pending"), ms)),
  ]);
}

// Resolves once `condition()` holds (checked every 10 ms), or rejects after `ms`.
function until(condition, ms, what) {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (condition()) resolve();
      else if (Date.now() > deadline) reject(new Error(`${what}: not within ${ms} ms`));
      else setTimeout(check, 10);
    };
    check();
  });
}

function loaded(target) {
  return new Promise((resolve) => target.addEventListener("load", resolve, {once: true}));
}

// The tool `name` once `modelContext.getTools()` lists it (asked every 20 ms, at most 15 s).
async function listedTool(modelContext, name) {
  const deadline = Date.now() + 15000;
  for (;;) {
    const tool = (await modelContext.getTools()).find((t) => t.name === name);
    if (tool) return tool;
    if (Date.now() > deadline) throw new Error(`no tool ${name} listed within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
