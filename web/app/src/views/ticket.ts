// The order ticket: BUY or SELL, YES or NO, LIMIT (with a price and time in force) or MARKET.
import { post } from '../api.js';
import { type Ctx, Notice } from '../context.js';
import { field, h, input, panel, select } from '../dom.js';
import type { Market, Order } from '../types.js';

export function describeOrder(o: Order): string {
  const what = `${o.action} ${o.quantity} ${o.side} ${o.type === 'MARKET' ? 'at market' : `at ${o.price}¢`}`;
  // An RFQ order fills whole at its price: an average would only repeat it.
  const filled =
    o.filled_quantity > 0 && o.type !== 'RFQ'
      ? `, ${o.filled_quantity} filled at ${o.average_fill_price ?? '—'}¢ average`
      : '';
  return `${what}: ${o.status}${filled}`;
}

export function ticketPanel(_ctx: Ctx, market: Market): HTMLElement {
  const notice = new Notice();
  const action = select('action', [
    ['BUY', 'Buy'],
    ['SELL', 'Sell'],
  ]);
  const side = select('side', [
    ['YES', 'YES'],
    ['NO', 'NO'],
  ]);
  const type = select('type', [
    ['LIMIT', 'Limit'],
    ['MARKET', 'Market'],
  ]);
  const price = input('price', {
    type: 'number',
    min: '1',
    max: '99',
    step: '1',
    inputmode: 'numeric',
    value: '50',
  });
  const quantity = input('quantity', {
    type: 'number',
    min: '1',
    step: '1',
    inputmode: 'numeric',
    value: '10',
  });
  const tif = select('time_in_force', [
    ['GTC', 'Good till cancelled'],
    ['IOC', 'Immediate or cancel'],
    ['FOK', 'Fill or kill'],
  ]);
  const priceField = field('Limit price (¢)', price);
  const tifField = field('Time in force', tif);
  const submit = h('button', { text: 'Place order', class: 'primary', attrs: { type: 'submit' } });
  const syncType = (): void => {
    const limit = type.value === 'LIMIT';
    priceField.hidden = !limit;
    tifField.hidden = !limit;
    price.disabled = !limit;
  };
  type.addEventListener('change', syncType);
  syncType();

  const form = h(
    'form',
    { class: 'ticket', attrs: { 'aria-label': 'Order ticket' } },
    h('div', { class: 'row' }, field('Action', action), field('Side', side), field('Type', type)),
    h('div', { class: 'row' }, priceField, field('Quantity', quantity), tifField),
    submit,
    notice.el,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body: Record<string, unknown> = {
      market_id: market.id,
      action: action.value,
      side: side.value,
      type: type.value,
      quantity: Number(quantity.value),
    };
    if (type.value === 'LIMIT') {
      body.price = Number(price.value);
      body.time_in_force = tif.value;
    }
    submit.disabled = true;
    void notice
      .run(
        () => post<Order>('/orders', body),
        (o) => `Order placed: ${describeOrder(o)}`,
      )
      .finally(() => {
        submit.disabled = false;
      });
  });
  return panel('Order ticket', form);
}
