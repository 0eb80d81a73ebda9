import { parentPort, type MessagePort } from 'node:worker_threads';
import { renderLiquid, type RenderJob } from './liquid-render.js';

/**
 * A render worker thread (render-pool.ts, docs/forms.md "Templates"): renders one Liquid job per
 * message: it posts `started` when the render begins (the pool's time limit runs from there, so a
 * thread's start-up is not counted) and its outcome when it ends, with the job's id. It is never
 * asked to stop a render: the pool terminates the thread when a render passes its limit.
 */
const port = parentPort as MessagePort;
port.on('message', (m: { id: number; job: RenderJob }) => {
  port.postMessage({ id: m.id, started: true });
  void renderLiquid(m.job).then((outcome) => port.postMessage({ id: m.id, ...outcome }));
});
