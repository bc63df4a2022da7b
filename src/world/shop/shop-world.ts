// Owns the behaviour of the shop world: a store's support back office whose
// tools find customers, read orders and products, cancel, re-address, return
// and refund. Arguments arrive already checked against the input schemas; this
// module enforces the rules a schema cannot say (the order must exist and be in
// a status that allows the change, a return must fall inside the 30-day window,
// a refund cannot exceed what is left to refund). One policy rule is stated but
// deliberately not enforced: refunds go to the original payment method. The
// world accepts a store-credit refund of a card order, as a real back office
// would, and tasks check that an agent follows the policy anyway.

import { copyPlain } from '../../core/json-copy.js';
import type { JsonObject, JsonValue } from '../../core/json-value.js';
import type { World } from '../world-contract.js';
import { dispatchTo, fail, succeed, type ToolHandler } from '../tool-handlers.js';
import {
  addRefund,
  dateOf,
  generateShopState,
  minutesOf,
  MINUTES_PER_DAY,
  RETURN_WINDOW_DAYS,
  SHIP_BACK_DAYS,
  timestamp,
  type Address,
  type Customer,
  type Order,
  type RefundMethod,
  type RefundRecord,
  type ReturnItem,
  type ReturnRecord,
  type ShopConfig,
  type ShopState,
} from './shop-state.js';
import { SHOP_TOOLS } from './shop-tools.js';
import { POSTAL_FORMATS, type Country, type OrderStatus } from './shop-vocabulary.js';


/** "$1,234.50": how amounts read in answers; tools give cents alongside. */
export function formatMoney(cents: number): string {
  return `$${groupedAmount(cents)}`;
}

function groupedAmount(cents: number): string {
  const whole = Math.floor(cents / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${whole}.${String(cents % 100).padStart(2, '0')}`;
}

function returnDeadline(order: Order): number | null {
  return order.delivered_at === null ? null : minutesOf(order.delivered_at) + RETURN_WINDOW_DAYS * MINUTES_PER_DAY;
}

function withinReturnWindow(state: ShopState, order: Order): boolean {
  const deadline = returnDeadline(order);
  return deadline !== null && state.clock <= deadline;
}

function remainingUnits(order: Order): number {
  return order.items.reduce((sum, line) => sum + line.quantity - line.returned_quantity, 0);
}

/** An order as tools show it and predicates judge it: the stored record plus what follows from it. */
function orderView(state: ShopState, order: Order): JsonObject {
  const deadline = returnDeadline(order);
  return copyPlain({
    order_id: order.order_id,
    customer_id: order.customer_id,
    email: order.email,
    status: order.status,
    placed_at: order.placed_at,
    items: order.items,
    subtotal_cents: order.subtotal_cents,
    shipping_cents: order.shipping_cents,
    total_cents: order.total_cents,
    paid_cents: order.paid_cents,
    refunded_cents: order.refunded_cents,
    refundable_cents: order.paid_cents - order.refunded_cents,
    payment: order.payment,
    shipping_address: order.shipping_address,
    estimated_ship_date: order.estimated_ship_date,
    shipment: order.shipment,
    delivered_at: order.delivered_at,
    return_by: deadline === null ? null : dateOf(deadline),
    returnable: order.status === 'delivered' && withinReturnWindow(state, order) && remainingUnits(order) > 0,
    cancelled_at: order.cancelled_at,
    cancel_reason: order.cancel_reason,
    return_ids: order.return_ids,
    refund_ids: order.refund_ids,
  }) as unknown as JsonObject;
}

function summary(order: Order): JsonObject {
  return {
    order_id: order.order_id,
    status: order.status,
    placed_at: order.placed_at,
    total_cents: order.total_cents,
    items: order.items.map((line) => ({ sku: line.sku, name: line.name, quantity: line.quantity })),
    carrier: order.shipment?.carrier ?? null,
    tracking_number: order.shipment?.tracking_number ?? null,
  };
}

function totals(orders: readonly Order[]): JsonObject {
  const paid = orders.reduce((sum, order) => sum + order.paid_cents, 0);
  const refunded = orders.reduce((sum, order) => sum + order.refunded_cents, 0);
  return {
    paid_cents: paid,
    refunded_cents: refunded,
    net_spent_cents: paid - refunded,
    paid: formatMoney(paid),
    refunded: formatMoney(refunded),
    net_spent: formatMoney(paid - refunded),
  };
}

function customerOrders(state: ShopState, customerId: string): Order[] {
  return [...state.orders.values()]
    .filter((order) => order.customer_id === customerId)
    .sort((left, right) => (left.placed_at > right.placed_at ? -1 : left.placed_at < right.placed_at ? 1 : left.order_id < right.order_id ? -1 : 1));
}

function publicCustomer(state: ShopState, customer: Customer): JsonObject {
  return copyPlain({ ...customer, order_count: customerOrders(state, customer.customer_id).length }) as unknown as JsonObject;
}

function refundView(refund: RefundRecord): JsonObject {
  return { ...refund, amount: formatMoney(refund.amount_cents) } as unknown as JsonObject;
}

function returnView(record: ReturnRecord): JsonObject {
  return copyPlain({ ...record, refund_due: formatMoney(record.refund_due_cents) }) as unknown as JsonObject;
}

function findOrder(state: ShopState, id: unknown): Order | string {
  return state.orders.get(id as string) ?? `Order ${id} not found. Order ids look like ORD-482913; list_orders shows a customer's orders.`;
}

function tick(state: ShopState): string {
  state.clock += 1;
  return timestamp(state.clock);
}

function shippedNote(order: Order): string {
  const shipment = order.shipment!;
  return `shipped on ${shipment.shipped_at.slice(0, 10)} with ${shipment.carrier} (tracking number ${shipment.tracking_number})`;
}

function windowNote(state: ShopState, order: Order): string {
  const deadline = returnDeadline(order)!;
  return withinReturnWindow(state, order)
    ? `the 30-day return window is open until ${dateOf(deadline)}`
    : `its 30-day return window closed on ${dateOf(deadline)}`;
}

/** Why an order in this status cannot change any more; null when it still can (pending or paid). */
function lockedReason(state: ShopState, order: Order, change: 'cancelled' | 'readdressed'): string | null {
  const what = change === 'cancelled' ? 'cannot be cancelled' : 'cannot have its shipping address changed';
  switch (order.status as OrderStatus) {
    case 'pending':
    case 'paid':
      return null;
    case 'shipped':
      return change === 'cancelled'
        ? `Order ${order.order_id} has already ${shippedNote(order)} and can no longer be cancelled. Once it is delivered it can be returned with create_return within 30 days of delivery.`
        : `Order ${order.order_id} has already ${shippedNote(order)}; a shipped order's address can no longer be changed. Give the customer the carrier and tracking number: the carrier may be able to redirect the parcel.`;
    case 'delivered':
      return change === 'cancelled'
        ? `Order ${order.order_id} was delivered on ${order.delivered_at!.slice(0, 10)} and cannot be cancelled. A delivered order can only be returned, with create_return; ${windowNote(state, order)}.`
        : `Order ${order.order_id} was delivered on ${order.delivered_at!.slice(0, 10)}; there is no shipment left to re-address.`;
    case 'cancelled':
      return `Order ${order.order_id} was cancelled on ${order.cancelled_at!.slice(0, 10)} and ${what}.`;
    case 'returned':
      return `Order ${order.order_id} has been returned in full and ${what}.`;
  }
}

function checkAddress(address: JsonObject): string | null {
  const country = address.country as Country;
  const format = POSTAL_FORMATS[country];
  const postal = String(address.postal_code).toUpperCase();
  if (!format.pattern.test(postal)) {
    return `address.postal_code: "${address.postal_code}" is not a valid ${country} postal code (expected the format of ${format.example}).`;
  }
  if (format.region && address.region === undefined) {
    return `address.region: a ${country} address needs a region code (state, province or territory, e.g. ${country === 'US' ? 'OR' : country === 'CA' ? 'ON' : 'NSW'}).`;
  }
  return null;
}

function issueRefund(state: ShopState, order: Order, amount: number, method: RefundMethod, reason: string, note: string | null): RefundRecord {
  const refund = addRefund(state, order, amount, method, reason, note, tick(state));
  if (method === 'store_credit') state.customers.get(order.customer_id)!.store_credit_cents += amount;
  return refund;
}

const handlers: Record<string, ToolHandler<ShopState>> = {
  find_customer(state, args) {
    const email = String(args.email).toLowerCase();
    const customer = [...state.customers.values()].find((candidate) => candidate.email.toLowerCase() === email);
    return customer ? succeed({ customer: publicCustomer(state, customer) }) : fail(`No customer with email ${args.email}. Check the spelling, or ask the customer which email they ordered with.`);
  },

  list_orders(state, args) {
    const customer = state.customers.get(args.customer_id as string);
    if (!customer) return fail(`No customer with id ${args.customer_id}. Use find_customer with the customer's email to get their id.`);
    const matching = customerOrders(state, customer.customer_id).filter((order) => args.status === undefined || order.status === args.status);
    const limit = (args.limit as number | undefined) ?? 20;
    return succeed({
      customer_id: customer.customer_id,
      total_count: matching.length,
      orders: matching.slice(0, limit).map(summary),
      totals: totals(matching),
    });
  },

  get_order(state, args) {
    const order = findOrder(state, args.order_id);
    return typeof order === 'string' ? fail(order) : succeed({ order: orderView(state, order) });
  },

  get_product(state, args) {
    const product = state.products.get(args.sku as string);
    if (!product) return fail(`No product with SKU ${args.sku}.`);
    return succeed({ product: { ...product, price: formatMoney(product.price_cents), in_stock: product.stock > 0 } });
  },

  cancel_order(state, args) {
    const order = findOrder(state, args.order_id);
    if (typeof order === 'string') return fail(order);
    const locked = lockedReason(state, order, 'cancelled');
    if (locked) return fail(locked);
    const refundable = order.paid_cents - order.refunded_cents;
    const refund = refundable > 0 ? issueRefund(state, order, refundable, order.payment.method, 'order_cancelled', null) : null;
    order.status = 'cancelled';
    order.cancelled_at = refund ? refund.created_at : tick(state);
    order.cancel_reason = args.reason as string;
    order.estimated_ship_date = null;
    for (const line of order.items) {
      const product = state.products.get(line.sku);
      if (product) product.stock += line.quantity;
    }
    return succeed({ order: orderView(state, order), refund: refund ? refundView(refund) : null });
  },

  update_shipping_address(state, args) {
    const order = findOrder(state, args.order_id);
    if (typeof order === 'string') return fail(order);
    const locked = lockedReason(state, order, 'readdressed');
    if (locked) return fail(locked);
    const address = args.address as JsonObject;
    const problem = checkAddress(address);
    if (problem) return fail(problem);
    const next: Address = {
      recipient: address.recipient as string,
      line1: address.line1 as string,
      line2: (address.line2 as string | undefined) ?? null,
      city: address.city as string,
      region: (address.region as string | undefined) ?? null,
      postal_code: String(address.postal_code).toUpperCase(),
      country: address.country as Country,
    };
    order.shipping_address = next;
    tick(state);
    return succeed({ order: orderView(state, order) });
  },

  create_return(state, args) {
    const order = findOrder(state, args.order_id);
    if (typeof order === 'string') return fail(order);
    switch (order.status as OrderStatus) {
      case 'pending':
      case 'paid':
        return fail(`Order ${order.order_id} has not shipped yet (status ${order.status}), so there is nothing to return; it can be cancelled with cancel_order instead.`);
      case 'shipped':
        return fail(`Order ${order.order_id} has ${shippedNote(order)} but is not delivered yet; a return can be opened once it is delivered.`);
      case 'cancelled':
        return fail(`Order ${order.order_id} was cancelled; there is nothing to return.`);
      case 'returned':
        return fail(`Every item of order ${order.order_id} has already been returned (${order.return_ids.join(', ')}).`);
      case 'delivered':
        break;
    }
    if (!withinReturnWindow(state, order)) {
      return fail(`Order ${order.order_id} was delivered on ${order.delivered_at!.slice(0, 10)}; ${windowNote(state, order)}, so it can no longer be returned.`);
    }
    const scope = args.scope as ReturnRecord['scope'];
    const requested = args.items as { sku: string; quantity: number }[] | undefined;
    let items: ReturnItem[];
    if (scope === 'entire_order') {
      if (requested !== undefined) return fail('items: leave items out when scope is "entire_order"; use scope "selected_items" to return some items.');
      items = order.items.filter((line) => line.quantity > line.returned_quantity).map((line) => ({ sku: line.sku, quantity: line.quantity - line.returned_quantity }));
    } else {
      if (requested === undefined) return fail('items: required when scope is "selected_items" (each SKU and how many units).');
      const seen = new Set<string>();
      for (const item of requested) {
        const line = order.items.find((candidate) => candidate.sku === item.sku);
        if (!line) return fail(`items: ${item.sku} is not on order ${order.order_id} (its SKUs: ${order.items.map((entry) => entry.sku).join(', ')}).`);
        if (seen.has(item.sku)) return fail(`items: ${item.sku} is listed twice; give each SKU once with its total quantity.`);
        seen.add(item.sku);
        const left = line.quantity - line.returned_quantity;
        if (item.quantity > left) return fail(`items: only ${left} unit(s) of ${item.sku} (${line.name}) can still be returned on order ${order.order_id}, not ${item.quantity}.`);
      }
      items = requested.map((item) => ({ sku: item.sku, quantity: item.quantity }));
    }
    const now = tick(state);
    let due = 0;
    for (const item of items) {
      const line = order.items.find((candidate) => candidate.sku === item.sku)!;
      line.returned_quantity += item.quantity;
      due += line.unit_price_cents * item.quantity;
    }
    const record: ReturnRecord = {
      return_id: `RMA-${state.next_return++}`,
      order_id: order.order_id,
      customer_id: order.customer_id,
      scope,
      items,
      reason: args.reason as string,
      note: (args.note as string | undefined) ?? null,
      status: 'authorized',
      created_at: now,
      ship_back_by: dateOf(state.clock + SHIP_BACK_DAYS * MINUTES_PER_DAY),
      refund_due_cents: due,
    };
    state.returns.set(record.return_id, record);
    order.return_ids.push(record.return_id);
    if (remainingUnits(order) === 0) order.status = 'returned';
    return succeed({ return: returnView(record), order: orderView(state, order) });
  },

  refund(state, args) {
    const order = findOrder(state, args.order_id);
    if (typeof order === 'string') return fail(order);
    const amount = args.amount_cents as number;
    const method = args.method as RefundMethod;
    if (order.paid_cents === 0) {
      return fail(`Order ${order.order_id} has not been paid (status ${order.status}), so there is nothing to refund.`);
    }
    if (method === 'card' && order.payment.method !== 'card') {
      return fail(`Order ${order.order_id} was paid with store credit, so it cannot be refunded to a card; use method "store_credit".`);
    }
    const refundable = order.paid_cents - order.refunded_cents;
    if (amount > refundable) {
      return fail(
        `A refund of ${formatMoney(amount)} is more than order ${order.order_id} has left to refund: paid ${formatMoney(order.paid_cents)}, ` +
          `already refunded ${formatMoney(order.refunded_cents)}, so at most ${formatMoney(refundable)} (${refundable} cents) can be refunded.`,
      );
    }
    const refund = issueRefund(state, order, amount, method, args.reason as string, (args.note as string | undefined) ?? null);
    return succeed({
      refund: refundView(refund),
      order: { order_id: order.order_id, paid_cents: order.paid_cents, refunded_cents: order.refunded_cents, refundable_cents: order.paid_cents - order.refunded_cents },
    });
  },
};

function sortedRecord<T>(map: Map<string, T>, view: (value: T) => JsonValue): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const key of [...map.keys()].sort()) out[key] = view(map.get(key)!);
  return out;
}

export const shopWorld: World<ShopState> = {
  name: 'shop',
  version: '1.0.0',
  description:
    "An online store's support back office: find customers by email, read orders and products, cancel unshipped orders, " +
    'change shipping addresses, open returns and issue refunds, under a stated returns and refunds policy.',
  tools: SHOP_TOOLS,
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      customers: {
        type: 'integer',
        minimum: 4,
        maximum: 12,
        default: 8,
        description: 'How many customers to generate; each has four to seven orders.',
      },
    },
  },
  init(random, config) {
    return generateShopState(random, config as ShopConfig);
  },
  call: dispatchTo('shop', handlers),
  snapshot(state): JsonValue {
    // A deep copy with maps keyed by id in sorted order. `spending` is derived
    // (list_orders totals compute the same figures) and kept apart from the
    // customers, so `/customers` changes only when a customer record does; it
    // lets predicates check an answer's total without arithmetic. orderView
    // makes its own copy; everything else is copied here.
    return {
      store: copyPlain(state.store) as unknown as JsonValue,
      now: timestamp(state.clock),
      clock: state.clock,
      customers: copyPlain(sortedRecord(state.customers, (customer) => customer as unknown as JsonValue)),
      spending: sortedRecord(state.customers, (customer) => {
        const net = totals(customerOrders(state, customer.customer_id)).net_spent_cents as number;
        return { customer_id: customer.customer_id, net_spent_cents: net, net_spent: groupedAmount(net), net_spent_plain: (net / 100).toFixed(2) };
      }),
      products: copyPlain(sortedRecord(state.products, (product) => ({ ...product, price: formatMoney(product.price_cents) }))),
      orders: sortedRecord(state.orders, (order) => orderView(state, order)),
      returns: copyPlain(sortedRecord(state.returns, (record) => record as unknown as JsonValue)),
      refunds: copyPlain(sortedRecord(state.refunds, (refund) => refund as unknown as JsonValue)),
      next_return: state.next_return,
      next_refund: state.next_refund,
    };
  },
};
