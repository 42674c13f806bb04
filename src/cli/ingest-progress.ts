import type { IngestProgress } from '../retrieval/ingest';

/**
 * The progress line `npm run ingest` keeps up to date on a terminal: files and chunks done,
 * rates and time left, rewritten in place (`\r`) a few times a second on stderr, so stdout
 * keeps only the summary line that scripts read.
 */

/** Where the line goes: a terminal's stderr, or a stand-in in tests. */
export interface ProgressStream {
  write(text: string): unknown;
  /** The terminal's width; the line is cut to fit so it never wraps (a wrapped line cannot be rewritten in place). */
  readonly columns?: number;
}

/** A snapshot of the progress and when it was taken (ms, any monotonic clock). */
export interface ProgressSample {
  readonly atMs: number;
  readonly progress: IngestProgress;
}

/**
 * Progress only where someone watches it: both stdout and stderr on a terminal and not in CI
 * (some CI runners attach a pseudo-terminal; their logs would fill with rewritten lines).
 */
export function progressWanted(where: { readonly stdoutIsTTY: boolean; readonly stderrIsTTY: boolean; readonly ci: boolean }): boolean {
  return where.stdoutIsTTY && where.stderrIsTTY && !where.ci;
}

/** Rates need this much time between the first and the latest sample to mean anything. */
const MIN_RATE_WINDOW_MS = 1000;

/**
 * One line from the first sample (the first file done) to the latest: rates over that span,
 * and the time left at the files' rate. Once every file is read, what remains is embedding
 * the last batch and deleting stale chunks: "finishing".
 */
export function describeProgress(first: ProgressSample, latest: ProgressSample): string {
  const { filesDone, filesTotal, chunksEmbedded } = latest.progress;
  const done = `${count(filesDone)}/${count(filesTotal)} files, ${count(chunksEmbedded)} chunks embedded`;
  if (filesDone >= filesTotal) return `${done} · finishing`;
  const seconds = (latest.atMs - first.atMs) / 1000;
  const filesRate = (filesDone - first.progress.filesDone) / seconds;
  if (seconds * 1000 < MIN_RATE_WINDOW_MS || !(filesRate > 0)) return `${done} · estimating time left`;
  const chunksRate = (chunksEmbedded - first.progress.chunksEmbedded) / seconds;
  const left = Math.ceil((filesTotal - filesDone) / filesRate);
  return `${done} · ${rate(filesRate)} files/s, ${rate(chunksRate)} chunks/s · ${duration(left)} left`;
}

/** 1,234 */
const count = (n: number): string => n.toLocaleString('en-US');

/** 0.4, 9.5, 12, 1,250 */
const rate = (perSecond: number): string => (perSecond < 10 ? perSecond.toFixed(1) : count(Math.round(perSecond)));

/** 45 s, 3 min 05 s, 2 h 07 min */
export function duration(totalSeconds: number): string {
  const s = Math.max(0, Math.ceil(totalSeconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  const minutes = Math.round(s / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** Erase from the cursor to the end of the line (ECMA-48 EL). */
const ERASE_TO_END = '\x1b[K';

/** The line itself: at most one rewrite per interval, erased when the work ends. */
export class ProgressLine {
  private first: ProgressSample | null = null;
  private lastDrawnAt = Number.NEGATIVE_INFINITY;
  private drawn = false;

  constructor(
    private readonly out: ProgressStream,
    private readonly now: () => number = () => performance.now(),
    private readonly intervalMs = 250,
  ) {}

  update(progress: IngestProgress): void {
    const latest = { atMs: this.now(), progress };
    this.first ??= latest;
    if (latest.atMs - this.lastDrawnAt < this.intervalMs) return;
    this.lastDrawnAt = latest.atMs;
    this.drawn = true;
    this.out.write(`\r${fit(describeProgress(this.first, latest), this.out.columns)}${ERASE_TO_END}`);
  }

  /** Leaves the terminal as it found it, so the summary (or an error) starts on a clean line. */
  clear(): void {
    if (this.drawn) this.out.write(`\r${ERASE_TO_END}`);
    this.drawn = false;
  }
}

const fit = (line: string, columns: number | undefined): string =>
  columns && columns > 1 && line.length >= columns ? `${line.slice(0, columns - 2)}…` : line;
