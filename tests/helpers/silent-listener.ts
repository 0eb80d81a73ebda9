import { spawn, spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';

/** A TCP port on 127.0.0.1 that takes no new connection: every SYN sent to it goes unanswered. */
export interface SilentListener {
  port: number;
  close(): void;
}

/** True when python3 runs here (the silent listener needs it). */
export function haveSilentListener(): boolean {
  return spawnSync('python3', ['-c', 'pass']).status === 0;
}

/**
 * A real "no answer" on loopback: a listener in a python3 child (so nothing in this process
 * accepts) with backlog 0 whose accept queue is filled by a few connections; the kernel then drops
 * every further SYN, so a connect() stays pending and a half-open probe gets no SYN-ACK or RST.
 */
export async function silentListener(): Promise<SilentListener> {
  const child = spawn('python3', ['-c', [
    'import socket, sys',
    's = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)',
    'print(s.getsockname()[1], flush=True)',
    'sys.stdin.read()',
  ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const fillers: Socket[] = [];
  const close = () => {
    for (const s of fillers) s.destroy();
    child.kill();
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
      child.once('exit', (code) => reject(new Error(`listener exited ${code}`)));
    });
    // fill the accept queue: connects complete until it is full, then hang
    for (let i = 0; i < 8; i++) {
      const s = connect({ host: '127.0.0.1', port });
      s.on('error', () => {});
      fillers.push(s);
    }
    await new Promise((r) => setTimeout(r, 200));
    return { port, close };
  } catch (err) {
    close();
    throw err;
  }
}

/**
 * A listener on 127.0.0.1 (in a python3 child) whose socket filter drops every RST: the kernel runs
 * a listener's filter on the segments for its half-open entries too, so each entry a SYN creates
 * stays, as on a member whose RST from the prober was lost on the way.
 */
export async function resetDroppingListener(): Promise<SilentListener> {
  const child = spawn('python3', ['-c', [
    'import ctypes, socket, struct, sys',
    's = socket.socket(); s.bind(("127.0.0.1", 0))',
    // classic BPF on the TCP header: ldb [13]; jset #0x04 (RST) -> drop; ret -1 (keep); ret 0 (drop)
    'code = [(0x30, 0, 0, 13), (0x45, 1, 0, 0x04), (0x06, 0, 0, 0xffffffff), (0x06, 0, 0, 0)]',
    'buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *c) for c in code))',
    's.setsockopt(socket.SOL_SOCKET, 26, struct.pack("HL", len(code), ctypes.addressof(buf)))  # SO_ATTACH_FILTER',
    's.listen(64)',
    'print(s.getsockname()[1], flush=True)',
    'sys.stdin.read()',
  ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const close = () => { child.kill(); };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
      child.once('exit', (code) => reject(new Error(`listener exited ${code}`)));
    });
    return { port, close };
  } catch (err) {
    close();
    throw err;
  }
}
