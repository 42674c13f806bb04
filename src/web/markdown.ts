import DOMPurify from 'dompurify';
import { Marked } from 'marked';

/**
 * Instructions and answers as Markdown (marked, GitHub flavour) made safe twice: raw HTML in
 * the text is rendered as text (it shows, it never runs), and what marked produced goes
 * through DOMPurify with a short list of tags, so no script, handler or style survives.
 * Links open in a new tab without a referrer or opener, and only http(s) and mailto links
 * stay links (a `javascript:` one loses its href).
 */
const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

const ALLOWED_TAGS = [
  'p', 'br', 'hr', 'strong', 'em', 'del', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
];
const purifier = DOMPurify(window);
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A') return;
  if (!node.hasAttribute('href')) return;
  node.setAttribute('target', '_blank');
  node.setAttribute('rel', 'noopener noreferrer nofollow');
});

/** `text` as sanitised Markdown, ready to append. */
export function renderMarkdown(text: string): DocumentFragment {
  const html = (marked.parse(text.trimEnd()) as string).trim();
  return purifier.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['href', 'title', 'class', 'start'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
    RETURN_DOM_FRAGMENT: true,
  });
}

/** A `div.markdown` (and `extraClass`) holding `text` rendered. */
export function markdownBlock(text: string, extraClass?: string): HTMLDivElement {
  const block = document.createElement('div');
  block.className = extraClass ? `markdown ${extraClass}` : 'markdown';
  block.append(renderMarkdown(text));
  return block;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
