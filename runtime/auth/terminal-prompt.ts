/**
 * Line prompts on a terminal. On a TTY the input is read in raw mode so secret answers are not
 * echoed (visible answers are echoed by hand; Backspace edits; Ctrl-C or Ctrl-D cancel). Without
 * a TTY (a pipe) each answer is the next input line.
 */
export class TerminalPrompt {
  private buf = '';
  private lastWasCr = false;
  private secret = false;
  private waiting: { resolve: (s: string) => void; reject: (e: Error) => void } | undefined;
  private readonly lines: string[] = [];
  private ended = false;
  private readonly tty: boolean;
  private readonly onData = (chunk: Buffer | string) => this.feed(chunk.toString('utf8'));
  private readonly onEnd = () => { this.ended = true; this.waiting?.reject(new Error('input ended')); this.waiting = undefined; };

  constructor(private readonly input: NodeJS.ReadStream, private readonly output: NodeJS.WriteStream) {
    this.tty = Boolean(input.isTTY);
    if (this.tty) input.setRawMode(true);
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.resume();
  }

  /** Writes the question and resolves with the answer (without the line end). */
  ask(question: string, opts: { secret?: boolean } = {}): Promise<string> {
    this.output.write(question);
    this.secret = opts.secret === true;
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.reject(new Error('input ended'));
    return new Promise((resolve, reject) => { this.waiting = { resolve, reject }; });
  }

  /** Restores the terminal and stops reading. */
  close(): void {
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    if (this.tty) this.input.setRawMode(false);
    this.input.pause();
  }

  private feed(text: string): void {
    for (const ch of text) {
      if (ch === '\n' && this.lastWasCr) { this.lastWasCr = false; continue; }
      this.lastWasCr = ch === '\r';
      if (ch === '\r' || ch === '\n') { this.finishLine(); continue; }
      if (this.tty && (ch === '\u0003' || (ch === '\u0004' && this.buf === ''))) {
        this.output.write('\n');
        this.waiting?.reject(new Error('cancelled'));
        this.waiting = undefined;
        this.ended = true;
        return;
      }
      if (ch === '\u007f' || ch === '\b') {
        if (this.buf.length > 0) {
          this.buf = this.buf.slice(0, -1);
          if (this.tty && !this.secret) this.output.write('\b \b');
        }
        continue;
      }
      if (ch < ' ') continue;
      this.buf += ch;
      if (this.tty && !this.secret) this.output.write(ch);
    }
  }

  private finishLine(): void {
    const line = this.buf;
    this.buf = '';
    if (this.tty) this.output.write('\n');
    if (this.waiting) { const w = this.waiting; this.waiting = undefined; w.resolve(line); } else this.lines.push(line);
  }
}
