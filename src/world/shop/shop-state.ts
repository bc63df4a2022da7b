// Owns the state of the shop world and its seeded generation: a store with
// customers, a product catalog, orders in every status, returns and a refund
// ledger. Ids, emails, card digits, tracking numbers and amounts are drawn from
// the seed, so an answer that names them proves it read them through a tool.
// Every customer gets the same shape of history (a recent multi-item delivery,
// an old delivery with a late-delivery refund, an open order, ...) so that a
// task can always find its kind of order, while the specifics vary.

import type { Random } from '../../core/random.js';
import { capitalise } from '../../core/letter-case.js';
import {
  CANCEL_REASONS,
  CARD_BRANDS,
  CARRIERS,
  CITIES,
  EMAIL_DOMAINS,
  FIRST_NAMES,
  LAST_NAMES,
  PRODUCTS,
  STORE_NAMES,
  STREETS,
  type Carrier,
  type Country,
  type OrderStatus,
} from './shop-vocabulary.js';
import { isoTimestamp } from '../../core/date-time.js';

export type RefundMethod = 'card' | 'store_credit';

export interface Address {
  recipient: string;
  line1: string;
  line2: string | null;
  city: string;
  region: string | null;
  postal_code: string;
  country: Country;
}

export interface Card {
  brand: string;
  last4: string;
}

export type Payment = { method: 'card'; brand: string; last4: string } | { method: 'store_credit' };

export interface Customer {
  customer_id: string;
  name: string;
  email: string;
  phone: string;
  default_address: Address;
  cards: Card[];
  store_credit_cents: number;
  member_since: string;
}

export interface Product {
  sku: string;
  name: string;
  category: string;
  price_cents: number;
  stock: number;
}

export interface OrderLine {
  sku: string;
  name: string;
  quantity: number;
  unit_price_cents: number;
  line_total_cents: number;
  returned_quantity: number;
}

export interface Shipment {
  carrier: Carrier;
  tracking_number: string;
  shipped_at: string;
  estimated_delivery: string;
}

export interface Order {
  order_id: string;
  customer_id: string;
  email: string;
  status: OrderStatus;
  placed_at: string;
  items: OrderLine[];
  subtotal_cents: number;
  shipping_cents: number;
  total_cents: number;
  paid_cents: number;
  refunded_cents: number;
  payment: Payment;
  shipping_address: Address;
  estimated_ship_date: string | null;
  shipment: Shipment | null;
  delivered_at: string | null;
  cancelled_at: string | null;
  cancel_reason: string | null;
  return_ids: string[];
  refund_ids: string[];
}

export interface ReturnItem {
  sku: string;
  quantity: number;
}

export interface ReturnRecord {
  return_id: string;
  order_id: string;
  customer_id: string;
  scope: 'entire_order' | 'selected_items';
  items: ReturnItem[];
  reason: string;
  note: string | null;
  status: 'authorized' | 'refunded';
  created_at: string;
  ship_back_by: string;
  refund_due_cents: number;
}

export interface RefundRecord {
  refund_id: string;
  order_id: string;
  customer_id: string;
  amount_cents: number;
  method: RefundMethod;
  destination: string;
  reason: string;
  note: string | null;
  created_at: string;
}

export interface ShopState {
  store: { name: string; support_email: string };
  /** The world's logical "now" in minutes since EPOCH; advances one minute per write. */
  clock: number;
  customers: Map<string, Customer>;
  products: Map<string, Product>;
  orders: Map<string, Order>;
  returns: Map<string, ReturnRecord>;
  refunds: Map<string, RefundRecord>;
  next_return: number;
  next_refund: number;
}

export interface ShopConfig {
  /** How many customers to generate (each with four to seven orders). */
  customers?: number;
}

const EPOCH = Date.UTC(2026, 0, 1);
export const MINUTES_PER_DAY = 24 * 60;
export const RETURN_WINDOW_DAYS = 30;
/** How long a customer has to send an authorised return back. */
export const SHIP_BACK_DAYS = 14;

export function timestamp(minutes: number): string {
  return isoTimestamp(EPOCH + minutes * 60_000);
}

export function dateOf(minutes: number): string {
  return timestamp(minutes).slice(0, 10);
}

/** Minutes since EPOCH of a timestamp this world wrote. */
export function minutesOf(stamp: string): number {
  return Math.round((Date.parse(stamp) - EPOCH) / 60_000);
}

export function destinationOf(payment: Payment, method: RefundMethod): string {
  return method === 'card' && payment.method === 'card' ? `${payment.brand} card ending ${payment.last4}` : 'store credit';
}

type Slot = 'pending' | 'paid' | 'shipped' | 'delivered_recent' | 'delivered_old' | 'cancelled' | 'returned';

export function generateShopState(random: Random, config: ShopConfig): ShopState {
  const storeName = random.pick(STORE_NAMES);
  const clock = random.int(130, 170) * MINUTES_PER_DAY + random.int(8 * 60, 18 * 60);
  const state: ShopState = {
    store: { name: storeName, support_email: `support@${storeName.toLowerCase().replace(/[^a-z]+/g, '')}.example.com` },
    clock,
    customers: new Map(),
    products: generateProducts(random),
    orders: new Map(),
    returns: new Map(),
    refunds: new Map(),
    next_return: random.int(20_000, 79_999),
    next_refund: random.int(100_000, 799_999),
  };

  const count = config.customers ?? 8;
  const firsts = random.sample(FIRST_NAMES, count);
  const lasts = random.sample(LAST_NAMES, count);
  const orderNumbers = random.distinctIntegers(count * 8, 100_000, 999_999);
  let orderIndex = 0;

  for (let index = 0; index < count; index++) {
    const customer = generateCustomer(random, firsts[index]!, lasts[index]!, clock);
    state.customers.set(customer.customer_id, customer);
    // Even customers have an order on its way and a paid one; odd ones a paid
    // and a pending one. So every customer has a paid order and at most one
    // order in each open status, and every shipped order's owner also has an
    // order whose address could still change (the plausible wrong record).
    const slots: Slot[] = ['delivered_recent', 'delivered_old', 'paid'];
    if (index % 2 === 0) {
      slots.push('shipped');
      if (random.chance(0.4)) slots.push('pending');
    } else {
      slots.push('pending');
    }
    if (random.chance(0.5)) slots.push('cancelled');
    if (random.chance(0.4)) slots.push('returned');
    for (const slot of slots) {
      const orderId = `ORD-${orderNumbers[orderIndex++]}`;
      // Card payments where a task needs a card: even customers' recent delivery and paid order.
      const forceCard = index % 2 === 0 && (slot === 'delivered_recent' || slot === 'paid');
      generateOrder(random, state, customer, orderId, slot, forceCard);
    }
  }
  return state;
}

function generateProducts(random: Random): Map<string, Product> {
  // Prices are distinct, and no stock count equals a number inside any price
  // ("$34.99" holds 34 and 99), so an answer naming a stock count cannot pass
  // for one naming a price, or another product's figures for the asked one's.
  const prices = new Set<number>();
  while (prices.size < PRODUCTS.length) {
    const entry = PRODUCTS[prices.size]!;
    prices.add(random.int(entry.dollars[0], entry.dollars[1]) * 100 - random.pick([1, 5, 51]));
  }
  const priceList = [...prices];
  const inPrices = new Set(priceList.flatMap((price) => [Math.floor(price / 100), price % 100]));
  const stocks = random.sample(
    Array.from({ length: 150 }, (_, value) => value).filter((value) => !inPrices.has(value)),
    PRODUCTS.length,
  );
  const products = new Map<string, Product>();
  PRODUCTS.forEach((entry, index) => {
    let sku: string;
    do sku = `${entry.prefix}-${random.hex(4).toUpperCase()}`;
    while (products.has(sku));
    products.set(sku, { sku, name: entry.name, category: entry.category, price_cents: priceList[index]!, stock: stocks[index]! });
  });
  return products;
}

function generateCustomer(random: Random, first: string, last: string, clock: number): Customer {
  const name = `${capitalise(first)} ${capitalise(last)}`;
  const cardCount = random.int(1, 2);
  const cards: Card[] = [];
  while (cards.length < cardCount) {
    const last4 = String(random.int(0, 9999)).padStart(4, '0');
    if (!cards.some((card) => card.last4 === last4)) cards.push({ brand: random.pick(CARD_BRANDS), last4 });
  }
  return {
    customer_id: `cus_${random.hex(10)}`,
    name,
    email: `${first}.${last}${random.int(10, 99)}@${random.pick(EMAIL_DOMAINS)}`,
    phone: `+1 555 ${random.int(100, 999)} ${random.int(1000, 9999)}`,
    default_address: generateAddress(random, name),
    cards,
    store_credit_cents: random.chance(0.3) ? random.int(5, 60) * 100 : 0,
    member_since: dateOf(clock - random.int(200, 1500) * MINUTES_PER_DAY),
  };
}

function generateAddress(random: Random, recipient: string): Address {
  const place = random.pick(CITIES);
  return {
    recipient,
    line1: `${random.int(2, 980)} ${random.pick(STREETS)}`,
    line2: random.chance(0.35) ? `Apt ${random.int(1, 40)}${random.pick(['', 'A', 'B', 'C'])}` : null,
    city: place.city,
    region: place.region,
    postal_code: postalCode(random, place.country),
    country: place.country,
  };
}

function postalCode(random: Random, country: Country): string {
  const letter = () => random.pick('ABCEGHJKLMNPRSTVXY'.split(''));
  const digit = () => String(random.int(0, 9));
  switch (country) {
    case 'US':
      return String(random.int(10_000, 99_899)).padStart(5, '0');
    case 'CA':
      return `${letter()}${digit()}${letter()} ${digit()}${letter()}${digit()}`;
    case 'GB':
      return `LS${random.int(1, 28)} ${digit()}${letter()}${letter()}`;
    case 'IE':
      return `H91 ${letter()}${digit()}${letter()}${digit()}`;
    case 'DE':
    case 'FR':
      return String(random.int(10_000, 99_899));
    case 'NL':
      return `${random.int(1000, 9999)} ${letter()}${letter()}`;
    case 'AU':
      return String(random.int(7000, 7999));
  }
}

function trackingNumber(random: Random, carrier: Carrier): string {
  const digits = (count: number) => Array.from({ length: count }, () => String(random.int(0, 9))).join('');
  switch (carrier) {
    case 'UPS':
      return `1Z${random.hex(6).toUpperCase()}${digits(10)}`;
    case 'USPS':
      return `9400${digits(18)}`;
    case 'FedEx':
      return digits(12);
    case 'DHL':
      return `JD${digits(16)}`;
  }
}

function generateOrder(random: Random, state: ShopState, customer: Customer, orderId: string, slot: Slot, forceCard: boolean): void {
  const day = MINUTES_PER_DAY;
  const clock = state.clock;
  const lineCount = slot === 'delivered_recent' ? random.int(2, 3) : random.int(1, 2);
  const items = generateLines(random, state, lineCount);
  const subtotal = items.reduce((sum, line) => sum + line.line_total_cents, 0);
  const shipping = random.int(5, 12) * 100 - 1;
  const payment: Payment =
    forceCard || random.chance(0.8) ? { method: 'card', ...random.pick(customer.cards) } : { method: 'store_credit' };
  const order: Order = {
    order_id: orderId,
    customer_id: customer.customer_id,
    email: customer.email,
    status: 'pending',
    placed_at: '',
    items,
    subtotal_cents: subtotal,
    shipping_cents: shipping,
    total_cents: subtotal + shipping,
    paid_cents: 0,
    refunded_cents: 0,
    payment,
    shipping_address: { ...customer.default_address },
    estimated_ship_date: null,
    shipment: null,
    delivered_at: null,
    cancelled_at: null,
    cancel_reason: null,
    return_ids: [],
    refund_ids: [],
  };
  const ship = (shippedAt: number, deliveredAt: number | null) => {
    const carrier = random.pick(CARRIERS);
    order.shipment = {
      carrier,
      tracking_number: trackingNumber(random, carrier),
      shipped_at: timestamp(shippedAt),
      estimated_delivery: dateOf(shippedAt + random.int(2, 5) * day),
    };
    if (deliveredAt !== null) order.delivered_at = timestamp(deliveredAt);
  };

  switch (slot) {
    case 'pending':
      order.placed_at = timestamp(clock - random.int(30, 2 * day));
      order.estimated_ship_date = dateOf(clock + random.int(1, 4) * day);
      break;
    case 'paid':
      order.status = 'paid';
      order.placed_at = timestamp(clock - random.int(60, 3 * day));
      order.paid_cents = order.total_cents;
      order.estimated_ship_date = dateOf(clock + random.int(1, 3) * day);
      break;
    case 'shipped': {
      const shippedAt = clock - random.int(1 * day, 3 * day);
      order.status = 'shipped';
      order.placed_at = timestamp(shippedAt - random.int(1 * day, 4 * day));
      order.paid_cents = order.total_cents;
      ship(shippedAt, null);
      break;
    }
    case 'delivered_recent':
    case 'delivered_old':
    case 'returned': {
      // Recent deliveries sit well inside the return window and old ones well
      // outside it, so a few minutes of world clock never move an order across.
      const [low, high] = slot === 'delivered_recent' ? [3, 20] : slot === 'delivered_old' ? [45, 150] : [25, 90];
      const deliveredAt = clock - random.int(low * day, high * day);
      const shippedAt = deliveredAt - random.int(1 * day, 4 * day);
      order.status = 'delivered';
      order.placed_at = timestamp(shippedAt - random.int(1 * day, 3 * day));
      order.paid_cents = order.total_cents;
      ship(shippedAt, deliveredAt);
      if (slot === 'delivered_old') {
        // Every customer has had one refund (the old order's shipping fee), so
        // net spending always differs from what was paid.
        addRefund(state, order, order.shipping_cents, order.payment.method, 'late_delivery', null, timestamp(deliveredAt + random.int(1, 3) * day));
      }
      if (slot === 'returned') {
        const createdAt = deliveredAt + random.int(1, 10) * day;
        const returnId = `RMA-${state.next_return++}`;
        state.returns.set(returnId, {
          return_id: returnId,
          order_id: orderId,
          customer_id: customer.customer_id,
          scope: 'entire_order',
          items: items.map((line) => ({ sku: line.sku, quantity: line.quantity })),
          reason: random.pick(['does_not_fit', 'no_longer_needed', 'not_as_described']),
          note: null,
          status: 'refunded',
          created_at: timestamp(createdAt),
          ship_back_by: dateOf(createdAt + SHIP_BACK_DAYS * day),
          refund_due_cents: subtotal,
        });
        for (const line of items) line.returned_quantity = line.quantity;
        order.status = 'returned';
        order.return_ids.push(returnId);
        addRefund(state, order, subtotal, order.payment.method, 'returned_items', null, timestamp(createdAt + random.int(3, 8) * day));
      }
      break;
    }
    case 'cancelled': {
      const placedAt = clock - random.int(5 * day, 60 * day);
      const cancelledAt = placedAt + random.int(30, day);
      order.status = 'cancelled';
      order.placed_at = timestamp(placedAt);
      order.cancelled_at = timestamp(cancelledAt);
      order.cancel_reason = random.pick(CANCEL_REASONS);
      if (random.chance(0.5)) {
        order.paid_cents = order.total_cents;
        addRefund(state, order, order.total_cents, order.payment.method, 'order_cancelled', null, timestamp(cancelledAt));
      }
      break;
    }
  }
  state.orders.set(orderId, order);
}

/** Records a refund against its order; what else a refund does (store credit on the customer's balance) is the caller's. */
export function addRefund(state: ShopState, order: Order, amount: number, method: RefundMethod, reason: string, note: string | null, createdAt: string): RefundRecord {
  const refund: RefundRecord = {
    refund_id: `RF-${state.next_refund++}`,
    order_id: order.order_id,
    customer_id: order.customer_id,
    amount_cents: amount,
    method,
    destination: destinationOf(order.payment, method),
    reason,
    note,
    created_at: createdAt,
  };
  state.refunds.set(refund.refund_id, refund);
  order.refunded_cents += amount;
  order.refund_ids.push(refund.refund_id);
  return refund;
}

/** Lines of distinct products with distinct line totals, so "that line's amount" names one line. */
function generateLines(random: Random, state: ShopState, count: number): OrderLine[] {
  const catalog = [...state.products.values()];
  for (;;) {
    const lines = random.sample(catalog, count).map((product) => {
      const quantity = random.chance(0.8) ? 1 : 2;
      return {
        sku: product.sku,
        name: product.name,
        quantity,
        unit_price_cents: product.price_cents,
        line_total_cents: product.price_cents * quantity,
        returned_quantity: 0,
      };
    });
    if (new Set(lines.map((line) => line.line_total_cents)).size === lines.length) return lines;
  }
}
