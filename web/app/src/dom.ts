// DOM building without markup strings: every text reaches the page through text nodes
// (textContent), so data from the API (comments, titles, names) can never become HTML.

type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  attrs?: Record<string, string>;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (e: HTMLElementEventMap[K]) => void }>;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class !== undefined) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  for (const [k, v] of Object.entries(props.attrs ?? {})) el.setAttribute(k, v);
  for (const [k, fn] of Object.entries(props.on ?? {})) {
    el.addEventListener(k, fn as EventListener);
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(
      typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c,
    );
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/** A labelled field: the label wraps its control, so getByLabel finds it. */
export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', { class: 'field' }, h('span', { text: label }), control);
}

export function input(name: string, attrs: Record<string, string> = {}): HTMLInputElement {
  return h('input', { attrs: { name, ...attrs } });
}

export function select(
  name: string,
  options: [string, string][],
  value?: string,
): HTMLSelectElement {
  const el = h('select', { attrs: { name } });
  for (const [v, label] of options) {
    const o = h('option', { text: label, attrs: { value: v } });
    if (v === value) o.selected = true;
    el.append(o);
  }
  return el;
}

export function button(
  label: string,
  onClick: (e: MouseEvent) => void,
  cls = '',
): HTMLButtonElement {
  return h('button', {
    text: label,
    class: cls,
    attrs: { type: 'button' },
    on: { click: onClick },
  });
}

/** A panel: a titled section (a landmark named by its heading). */
export function panel(title: string, ...children: Child[]): HTMLElement {
  const id = `panel-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return h(
    'section',
    { class: 'panel', attrs: { 'aria-labelledby': id } },
    h('h2', { text: title, attrs: { id } }),
    ...children,
  );
}

export function cents(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  return `${v}¢`;
}

export function dollars(centsValue: number): string {
  const sign = centsValue < 0 ? '-' : '';
  const abs = Math.abs(centsValue);
  return `${sign}$${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}

export function time(iso: string): string {
  return new Date(iso).toLocaleTimeString('en-GB', { hour12: false });
}
