import { GatewayError, UsageByDayDocument, type UsageByDayQuery } from '../../packages/client/src';
import type { App, Page } from './app';
import { clear, formatNumber, formatUsd, h, svg } from './dom';
import { layoutUsageChart, SERIES, tickDecimals, turnsOf, type ChartLayout, type UsageDay } from './usage-chart';

const RANGES = [7, 30, 90] as const;
const day = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const dayOf = (iso: string) => day.format(new Date(`${iso}T00:00:00Z`));

/** Turns per day by status and cost per day (usageByDay), as an SVG chart with the numbers in a table too. */
export function mountUsagePage(app: App, main: HTMLElement): Page {
  let disposed = false;
  let usage: UsageByDayQuery['usageByDay'] | null = null;
  const scope = h('p', { class: 'muted' });
  const totals = h('dl', { class: 'totals' });
  const chartBox = h('div', { class: 'chart' });
  const table = h('details', { class: 'data-table' });
  const notice = h('p', { class: 'notice', role: 'status' });
  const range = h(
    'select',
    { id: 'usage-range', onchange: () => void load() },
    ...RANGES.map((n) => h('option', { value: n, selected: n === 30 }, `Last ${n} days`)),
  );
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    ...SERIES.map((s) => h('li', {}, h('span', { class: `swatch fill-${s.status}`, 'aria-hidden': 'true' }), s.label)),
    h('li', {}, h('span', { class: 'swatch fill-cost', 'aria-hidden': 'true' }), 'Cost (USD)'),
  );
  clear(
    main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Usage'), h('div', { class: 'field inline' }, h('label', { for: 'usage-range' }, 'Period'), range)),
    scope,
    notice,
    totals,
    h('section', { class: 'card', 'aria-labelledby': 'chart-title' }, h('h2', { id: 'chart-title' }, 'Turns and cost per day'), legend, chartBox),
    table,
  );

  // The chart is drawn for its real width, so its text stays readable on a phone.
  const resize = new ResizeObserver(() => draw());
  resize.observe(chartBox);

  async function load(): Promise<void> {
    const days = Number(range.value);
    try {
      const result = await app.client.query(UsageByDayDocument, { days });
      if (disposed) return;
      usage = result.usageByDay;
      notice.textContent = '';
      scope.textContent = `${usage.scope === 'ORGANIZATION' ? `Every turn in ${app.viewer.organization.text}` : 'Your own turns'}, last ${days} days (UTC).`;
      renderTotals(usage.days);
      renderTable(usage.days);
      draw();
    } catch (e) {
      if (e instanceof GatewayError) app.onError(e);
      notice.textContent = `Could not load usage: ${(e as Error).message}`;
    }
  }

  function draw(): void {
    if (!usage) return;
    const width = Math.max(280, Math.round(chartBox.clientWidth));
    clear(chartBox, chart(layoutUsageChart(usage.days, width, width < 500 ? 300 : 340)));
  }

  function renderTotals(days: readonly UsageDay[]): void {
    const sum = (f: (d: UsageDay) => number) => days.reduce((n, d) => n + f(d), 0);
    const items: [string, string][] = [
      ['Turns', formatNumber(sum(turnsOf))],
      ...SERIES.map((s): [string, string] => [s.label, formatNumber(sum((d) => d[s.key]))]),
      ['Cost', formatUsd(sum((d) => d.estimatedCostUsd))],
    ];
    clear(totals, ...items.map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))));
  }

  function renderTable(days: readonly UsageDay[]): void {
    clear(
      table,
      h('summary', {}, 'The numbers as a table'),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          {},
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), ...SERIES.map((s) => h('th', { scope: 'col', class: 'num' }, s.label)), h('th', { scope: 'col', class: 'num' }, 'Cost'))),
          h(
            'tbody',
            {},
            ...[...days].reverse().map((d) =>
              h('tr', {}, h('th', { scope: 'row' }, d.date), ...SERIES.map((s) => h('td', { class: 'num' }, formatNumber(d[s.key]))), h('td', { class: 'num' }, formatUsd(d.estimatedCostUsd))),
            ),
          ),
        ),
      ),
    );
  }

  void load();
  return {
    live: false,
    dispose() {
      disposed = true;
      resize.disconnect();
    },
  };
}

function chart(layout: ChartLayout): SVGSVGElement {
  const { width, height, left, right, turns, cost } = layout;
  const total = layout.days.reduce((n, d) => n + turnsOf(d.day), 0);
  const y = (panel: ChartLayout['turns'], value: number) => panel.bottom - (value / panel.scale.max) * (panel.bottom - panel.top);
  const grid = (panel: ChartLayout['turns'], format: (v: number) => string) =>
    panel.scale.ticks.map((tick) =>
      svg(
        'g',
        { class: 'tick' },
        svg('line', { x1: left, x2: right, y1: y(panel, tick), y2: y(panel, tick) }),
        svg('text', { x: left - 6, y: y(panel, tick), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, format(tick)),
      ),
    );
  return svg(
    'svg',
    {
      'data-testid': 'usage-chart',
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-labelledby': 'usage-chart-title usage-chart-desc',
    },
    svg('title', { id: 'usage-chart-title' }, 'Turns per day by status, and cost per day'),
    svg('desc', { id: 'usage-chart-desc' }, `${total} turns over ${layout.days.length} days; the table below the chart has every number.`),
    svg('g', { class: 'grid' }, ...grid(turns, (v) => formatNumber(v)), ...grid(cost, (v) => `$${v.toFixed(Math.max(2, tickDecimals(cost.scale.ticks)))}`)),
    svg('text', { class: 'panel-label', x: left, y: turns.top - 10 }, 'Turns per day'),
    svg('text', { class: 'panel-label', x: left, y: cost.top - 10 }, 'Cost per day (USD)'),
    ...layout.days.map((d) =>
      svg(
        'g',
        { class: 'day' },
        svg(
          'title',
          {},
          `${d.day.date}: ${SERIES.map((s) => `${d.day[s.key]} ${s.label.toLowerCase()}`).join(', ')}; ${formatUsd(d.day.estimatedCostUsd)}`,
        ),
        svg('rect', { class: 'column', x: d.column.x, y: d.column.y, width: d.column.width, height: d.column.height }),
        ...d.segments.map((s) => svg('rect', { class: `fill-${s.status}`, x: s.x, y: s.y, width: s.width, height: s.height })),
        d.cost.height > 0 ? svg('rect', { class: 'fill-cost', x: d.cost.x, y: d.cost.y, width: d.cost.width, height: d.cost.height }) : null,
      ),
    ),
    svg('line', { class: 'axis', x1: left, x2: right, y1: turns.bottom, y2: turns.bottom }),
    svg('line', { class: 'axis', x1: left, x2: right, y1: cost.bottom, y2: cost.bottom }),
    ...layout.labelled.map((i) => {
      const d = layout.days[i] as ChartLayout['days'][number];
      const centre = d.column.x + d.column.width / 2;
      // A label that would stick out on the right ends at the edge instead.
      const atEdge = centre + 28 > width;
      return svg(
        'text',
        { class: 'x-label', x: atEdge ? width - 2 : centre, y: cost.bottom + 16, 'text-anchor': atEdge ? 'end' : 'middle' },
        dayOf(d.day.date),
      );
    }),
  );
}
