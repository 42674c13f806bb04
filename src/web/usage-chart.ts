import type { UsageByDayQuery } from '../../packages/client/src/generated/operations';

export type UsageDay = UsageByDayQuery['usageByDay']['days'][number];
type CountKey = 'completedTurns' | 'failedTurns' | 'cancelledTurns' | 'pendingTurns';

/** Stacked bottom to top in this order. */
export const SERIES: readonly { readonly key: CountKey; readonly status: string; readonly label: string }[] = [
  { key: 'completedTurns', status: 'completed', label: 'Completed' },
  { key: 'failedTurns', status: 'failed', label: 'Failed' },
  { key: 'cancelledTurns', status: 'cancelled', label: 'Cancelled' },
  { key: 'pendingTurns', status: 'pending', label: 'Pending' },
];

export const turnsOf = (day: UsageDay): number => SERIES.reduce((n, s) => n + day[s.key], 0);

export interface Scale {
  readonly max: number;
  readonly ticks: readonly number[];
}

/** An axis from 0 to a round number at or above `max`, with 2-5 round steps (whole ones for counts). */
export function niceScale(max: number, integer: boolean): Scale {
  if (!(max > 0)) return { max: integer ? 1 : 0.01, ticks: integer ? [0, 1] : [0, 0.01] };
  const rough = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const candidates = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).filter((s) => !integer || Number.isInteger(s));
  const step = Math.max(integer ? 1 : 0, candidates.find((s) => s >= rough) ?? 10 * magnitude);
  const top = Math.ceil(max / step) * step;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => Number((i * step).toPrecision(12)));
  return { max: top, ticks };
}

/** Decimals that write every tick exactly, so close steps ($0.010, $0.015) never print alike. */
export function tickDecimals(ticks: readonly number[]): number {
  for (let digits = 0; digits < 8; digits++) {
    if (ticks.every((t) => Math.abs(Number(t.toFixed(digits)) - t) < 1e-12)) return digits;
  }
  return 8;
}

export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface DayBars {
  readonly day: UsageDay;
  /** One per series with turns that day, bottom to top. */
  readonly segments: readonly (Rect & { readonly status: string; readonly count: number })[];
  readonly cost: Rect;
  /** The day's whole column, for hover and focus. */
  readonly column: Rect;
}

export interface ChartLayout {
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly right: number;
  readonly turns: { readonly top: number; readonly bottom: number; readonly scale: Scale };
  readonly cost: { readonly top: number; readonly bottom: number; readonly scale: Scale };
  readonly days: readonly DayBars[];
  /** Which days get a date under the axis, so labels never overlap. */
  readonly labelled: readonly number[];
}

const MARGIN = { left: 56, right: 12, top: 22, gap: 40, bottom: 26 };
const LABEL_WIDTH = 52;

/**
 * Geometry of the usage chart for a drawing `width` x `height` px: turns per day stacked by
 * status above, cost per day below, one column per day. Pure, so the numbers can be tested.
 */
export function layoutUsageChart(days: readonly UsageDay[], width: number, height: number): ChartLayout {
  const panels = height - MARGIN.top - MARGIN.gap - MARGIN.bottom;
  const turnsTop = MARGIN.top;
  const turnsBottom = turnsTop + panels * 0.6;
  const costTop = turnsBottom + MARGIN.gap;
  const costBottom = costTop + panels * 0.4;
  const turnScale = niceScale(Math.max(0, ...days.map(turnsOf)), true);
  const costScale = niceScale(Math.max(0, ...days.map((d) => d.estimatedCostUsd)), false);
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const band = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(1, band * 0.7);
  const layout = days.map((day, i): DayBars => {
    const x = MARGIN.left + i * band + (band - barWidth) / 2;
    let y = turnsBottom;
    const segments = SERIES.filter((s) => day[s.key] > 0).map((s) => {
      const h = (day[s.key] / turnScale.max) * (turnsBottom - turnsTop);
      y -= h;
      return { x, y, width: barWidth, height: h, status: s.status, count: day[s.key] };
    });
    const costHeight = (day.estimatedCostUsd / costScale.max) * (costBottom - costTop);
    return {
      day,
      segments,
      cost: { x, y: costBottom - costHeight, width: barWidth, height: costHeight },
      column: { x: MARGIN.left + i * band, y: turnsTop, width: band, height: costBottom - turnsTop },
    };
  });
  const every = Math.max(1, Math.ceil(LABEL_WIDTH / band));
  // Count back from the newest day, so today always has its label.
  const labelled = days.map((_, i) => i).filter((i) => (days.length - 1 - i) % every === 0);
  return {
    width,
    height,
    left: MARGIN.left,
    right: width - MARGIN.right,
    turns: { top: turnsTop, bottom: turnsBottom, scale: turnScale },
    cost: { top: costTop, bottom: costBottom, scale: costScale },
    days: layout,
    labelled,
  };
}
