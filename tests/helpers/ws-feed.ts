import { WebSocket } from 'ws';
import { api, type TestDaemon } from './daemon.js';

/** One live-feed message (gslb-api.md §6). */
export type FeedMessage = { type: string; payload: any };

/** An open live feed that records every message. */
export interface Feed {
  ws: WebSocket;
  msgs: FeedMessage[];
  /** the first message (already received or still to come) that matches; no time bound of its own */
  next: (pred: (m: FeedMessage) => boolean) => Promise<FeedMessage>;
  close: () => void;
}

/** Opens the live feed of `d` as the caller of `headers` (a token from GET /ws/token, then the upgrade). */
export async function openFeed(d: TestDaemon, headers: Record<string, string> = {}): Promise<Feed> {
  const tok = await api(d.url, 'GET', '/api/v1/ws/token', undefined, headers);
  if (tok.status !== 200) throw new Error(`GET /ws/token: ${tok.status} ${JSON.stringify(tok.body)}`);
  const ws = new WebSocket(`${d.url.replace('http', 'ws')}/api/v1/ws?token=${encodeURIComponent(tok.body.token as string)}`);
  const msgs: FeedMessage[] = [];
  const waiters: { pred: (m: FeedMessage) => boolean; res: (m: FeedMessage) => void }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as FeedMessage;
    msgs.push(m);
    for (const w of [...waiters]) if (w.pred(m)) { waiters.splice(waiters.indexOf(w), 1); w.res(m); }
  });
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  const next = (pred: (m: FeedMessage) => boolean) => {
    const found = msgs.find(pred);
    return found ? Promise.resolve(found) : new Promise<FeedMessage>((res) => waiters.push({ pred, res }));
  };
  return { ws, msgs, next, close: () => ws.terminate() };
}
