// A Web Worker of the lab: it loads the lab's own wasm module (its URLs come with each job)
// and answers each job with the named export's result (crash points, sweep runs).
let lab = null;
self.onmessage = async (e) => {
  const { module, wasm, fn, job, id } = e.data;
  try {
    if (!lab) {
      lab = await import(module);
      await lab.default({ module_or_path: wasm });
    }
    self.postMessage({ id, result: lab[fn](job) });
  } catch (err) {
    self.postMessage({ id, result: JSON.stringify({ error: String(err) }) });
  }
};
