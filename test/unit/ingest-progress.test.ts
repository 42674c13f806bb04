import { describeProgress, duration, ProgressLine, progressWanted, type ProgressSample } from '../../src/cli/ingest-progress';
import { loadConfig } from '../../src/config';
import type { IngestProgress } from '../../src/retrieval/ingest';

const at = (atMs: number, filesDone: number, filesTotal: number, chunksEmbedded: number): ProgressSample => ({
  atMs,
  progress: { filesDone, filesTotal, chunksEmbedded },
});

/** A terminal stand-in: what was written, and what a terminal would show on its last line. */
class FakeTerminal {
  readonly writes: string[] = [];
  constructor(readonly columns?: number) {}
  write(text: string): boolean {
    this.writes.push(text);
    return true;
  }
  get screen(): string {
    let line = '';
    for (const text of this.writes) {
      for (const part of text.split(/(\r|\x1b\[K)/)) {
        if (part === '\r') line = '';
        else if (part !== '\x1b[K') line += part;
      }
    }
    return line;
  }
}

describe('the ingest progress line', () => {
  it('shows files and chunks done, both rates and the time left at the files rate', () => {
    // 400 files in 10 s after the first: 40 files/s; 3,000 chunks: 300/s; 1,600 files to go: 40 s.
    expect(describeProgress(at(0, 1, 2001, 0), at(10_000, 401, 2001, 3000))).toBe(
      '401/2,001 files, 3,000 chunks embedded · 40 files/s, 300 chunks/s · 40 s left',
    );
    // Slow rates keep a decimal; the time left rounds up.
    expect(describeProgress(at(0, 10, 100, 64), at(4000, 13, 100, 96))).toBe(
      '13/100 files, 96 chunks embedded · 0.8 files/s, 8.0 chunks/s · 1 min 56 s left',
    );
  });

  it('estimates nothing from less than a second or from no progress, and says when only the finishing work is left', () => {
    expect(describeProgress(at(0, 1, 50, 0), at(900, 30, 50, 128))).toBe('30/50 files, 128 chunks embedded · estimating time left');
    expect(describeProgress(at(0, 5, 50, 0), at(5000, 5, 50, 128))).toBe('5/50 files, 128 chunks embedded · estimating time left');
    expect(describeProgress(at(0, 1, 50, 0), at(5000, 50, 50, 300))).toBe('50/50 files, 300 chunks embedded · finishing');
  });

  it('writes durations people read', () => {
    expect(duration(0)).toBe('0 s');
    expect(duration(44.2)).toBe('45 s');
    expect(duration(185)).toBe('3 min 05 s');
    expect(duration(2 * 3600 + 7 * 60 + 10)).toBe('2 h 07 min');
  });

  it('rewrites one line at most four times a second, cut to the terminal width, and erases it at the end', () => {
    let now = 0;
    const terminal = new FakeTerminal(40);
    const line = new ProgressLine(terminal, () => now);
    const progress = (filesDone: number): IngestProgress => ({ filesDone, filesTotal: 1000, chunksEmbedded: filesDone * 2 });

    for (let file = 1; file <= 100; file++) {
      now = file * 20; // a file every 20 ms for 2 s
      line.update(progress(file));
    }
    // Drawn at 20 ms, then at the first update 250 ms after the last drawing: 280, 540, ... 1840.
    expect(terminal.writes).toHaveLength(8);
    for (const text of terminal.writes) {
      expect(text.startsWith('\r')).toBe(true);
      expect(text.endsWith('\x1b[K')).toBe(true);
      expect(text).not.toContain('\n');
    }
    expect(terminal.screen).toBe('92/1,000 files, 184 chunks embedded · …');
    expect(terminal.screen.length).toBe(39);

    line.clear();
    expect(terminal.screen).toBe('');
    line.clear();
    expect(terminal.writes).toHaveLength(9);
  });

  it('erases nothing when it drew nothing', () => {
    const terminal = new FakeTerminal();
    new ProgressLine(terminal).clear();
    expect(terminal.writes).toEqual([]);
  });

  it('is wanted only with stdout and stderr on a terminal and outside CI', () => {
    expect(progressWanted({ stdoutIsTTY: true, stderrIsTTY: true, ci: false })).toBe(true);
    expect(progressWanted({ stdoutIsTTY: false, stderrIsTTY: true, ci: false })).toBe(false);
    expect(progressWanted({ stdoutIsTTY: true, stderrIsTTY: false, ci: false })).toBe(false);
    expect(progressWanted({ stdoutIsTTY: true, stderrIsTTY: true, ci: true })).toBe(false);
  });

  it('counts any CI value but false or 0 as a CI runner, and refuses none', () => {
    for (const value of ['true', '1', 'yes', 'gitlab']) expect(loadConfig({ CI: value }).ci).toBe(true);
    for (const value of [undefined, '', 'false', 'FALSE', '0']) expect(loadConfig({ CI: value }).ci).toBe(false);
  });
});
