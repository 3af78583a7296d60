// A Web Worker for the crash heat map: it loads the lab's own wasm module (its URLs come in
// the first message) and runs loglab_crash_points on each job it is sent.
let lab = null;
self.onmessage = async (e) => {
  const { module, wasm, job, id } = e.data;
  try {
    if (!lab) {
      lab = await import(module);
      await lab.default({ module_or_path: wasm });
    }
    self.postMessage({ id, result: lab.loglab_crash_points(job) });
  } catch (err) {
    self.postMessage({ id, result: JSON.stringify({ error: String(err) }) });
  }
};
