/**
 * A few DOM helpers. Text always goes in as text (never as HTML), so nothing a session name
 * or an answer contains can run as markup.
 */
type Attributes = Record<string, string | number | boolean | null | undefined | ((event: Event) => void | Promise<void>)>;
export type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

function setAttributes(element: Element, attributes: Attributes): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), (event) => void value(event));
    else element.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(element: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

export function clear(element: Element, ...children: Child[]): void {
  element.replaceChildren();
  append(element, children);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** A `<time>` showing how long ago, with the full date on hover. */
export function timeAgo(iso: string | null | undefined, now: number = Date.now()): Node {
  if (!iso) return document.createTextNode('—');
  const date = new Date(iso);
  const seconds = Math.round((date.getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 45
      ? relative.format(seconds, 'second')
      : abs < 2700
        ? relative.format(Math.round(seconds / 60), 'minute')
        : abs < 64_800
          ? relative.format(Math.round(seconds / 3600), 'hour')
          : abs < 2_592_000
            ? relative.format(Math.round(seconds / 86_400), 'day')
            : dateTime.format(date);
  return h('time', { datetime: iso, title: dateTime.format(date) }, text);
}

export function formatUsd(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (value === 0) return '$0';
  return value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

export const formatNumber = (value: number): string => value.toLocaleString();

/**
 * A status badge whose text is the enum value itself (CSS shows it as "Completed"); `testId`
 * is the hook tests read it by.
 */
export function statusBadge(status: string | null | undefined, testId?: string): HTMLElement {
  if (!status) return h('span', { class: 'status status-none', 'data-testid': testId }, '—');
  return h('span', { class: `status status-${status.toLowerCase()}`, 'data-testid': testId }, status);
}
