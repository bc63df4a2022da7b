// Owns the shop world's tool catalog: names, descriptions (which state the
// store's policy where a tool touches it) and the JSON Schemas (draft 2020-12)
// of inputs and outputs that clients see in tools/list, plus the claim
// patterns that tie an answer's "I cancelled…" to a call.

import type { JsonObject } from '../../core/json-value.js';
import type { ToolSpec } from '../world-contract.js';
import { claimSubject } from '../claim-subject.js';
import { objectSchema } from '../tool-schema.js';
import {
  CANCEL_REASONS,
  COUNTRIES,
  ORDER_STATUSES,
  REFUND_METHODS,
  REFUND_REASONS,
  RETURN_REASONS,
  RETURN_SCOPES,
} from './shop-vocabulary.js';

/** Output objects list what they promise but do not forbid more (a newer server may add fields). */
function resultSchema(properties: JsonObject, required: string[]): JsonObject {
  return { type: 'object', properties, required };
}

const CLAIM_SUBJECT = claimSubject('already');

const orderId: JsonObject = { type: 'string', pattern: '^ORD-[0-9]{6}$', description: 'An order id, e.g. ORD-482913.' };
const customerId: JsonObject = { type: 'string', pattern: '^cus_[0-9a-f]{10}$', description: 'A customer id from find_customer, e.g. cus_3f9a0c12be.' };
const sku: JsonObject = { type: 'string', pattern: '^[A-Z]{3}-[0-9A-F]{4}$', description: 'A product SKU, e.g. KIT-4F2A.' };
const cents: JsonObject = { type: 'integer', minimum: 0 };
const money: JsonObject = { type: 'string', pattern: '^\\$[0-9]{1,3}(,[0-9]{3})*\\.[0-9]{2}$', description: 'The same amount for people, e.g. $1,234.50.' };
const dateTime: JsonObject = { type: 'string', format: 'date-time' };
const date: JsonObject = { type: 'string', format: 'date' };
const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: 'null' }] });
const status: JsonObject = { type: 'string', enum: [...ORDER_STATUSES] };

const addressOut: JsonObject = resultSchema(
  {
    recipient: { type: 'string' },
    line1: { type: 'string' },
    line2: { type: ['string', 'null'] },
    city: { type: 'string' },
    region: { type: ['string', 'null'] },
    postal_code: { type: 'string' },
    country: { type: 'string', enum: [...COUNTRIES] },
  },
  ['recipient', 'line1', 'line2', 'city', 'region', 'postal_code', 'country'],
);

const addressIn: JsonObject = objectSchema(
  {
    recipient: { type: 'string', minLength: 1, maxLength: 80, description: 'Who the parcel is addressed to.' },
    line1: { type: 'string', minLength: 1, maxLength: 100, description: 'Street and number.' },
    line2: { type: 'string', minLength: 1, maxLength: 100, description: 'Apartment, suite, floor (optional).' },
    city: { type: 'string', minLength: 1, maxLength: 60 },
    region: {
      type: 'string',
      pattern: '^[A-Z]{2,3}$',
      description: 'State, province or territory code (e.g. OR, ON, NSW); required for US, CA and AU addresses.',
    },
    postal_code: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{2,9}$',
      description: "Postal or ZIP code in the country's own format (US 94107, CA M5V 2T6, GB SW1A 1AA, AU 2000).",
    },
    country: { type: 'string', enum: [...COUNTRIES], description: 'ISO 3166-1 alpha-2 country code.' },
  },
  ['recipient', 'line1', 'city', 'postal_code', 'country'],
);

const payment: JsonObject = {
  type: 'object',
  required: ['method'],
  properties: {
    method: { type: 'string', enum: [...REFUND_METHODS] },
    brand: { type: 'string' },
    last4: { type: 'string', pattern: '^[0-9]{4}$' },
  },
};

const line: JsonObject = resultSchema(
  {
    sku: { type: 'string' },
    name: { type: 'string' },
    quantity: { type: 'integer', minimum: 1 },
    unit_price_cents: cents,
    line_total_cents: cents,
    returned_quantity: cents,
  },
  ['sku', 'name', 'quantity', 'unit_price_cents', 'line_total_cents', 'returned_quantity'],
);

const shipment: JsonObject = resultSchema(
  {
    carrier: { type: 'string' },
    tracking_number: { type: 'string' },
    shipped_at: dateTime,
    estimated_delivery: date,
  },
  ['carrier', 'tracking_number', 'shipped_at', 'estimated_delivery'],
);

const order: JsonObject = resultSchema(
  {
    order_id: { type: 'string' },
    customer_id: { type: 'string' },
    email: { type: 'string', format: 'email' },
    status,
    placed_at: dateTime,
    items: { type: 'array', items: line, minItems: 1 },
    subtotal_cents: cents,
    shipping_cents: cents,
    total_cents: cents,
    paid_cents: cents,
    refunded_cents: cents,
    refundable_cents: cents,
    payment,
    shipping_address: addressOut,
    estimated_ship_date: nullable(date),
    shipment: nullable(shipment),
    delivered_at: nullable(dateTime),
    return_by: nullable(date),
    returnable: { type: 'boolean' },
    cancelled_at: nullable(dateTime),
    cancel_reason: { type: ['string', 'null'] },
    return_ids: { type: 'array', items: { type: 'string' } },
    refund_ids: { type: 'array', items: { type: 'string' } },
  },
  [
    'order_id', 'customer_id', 'email', 'status', 'placed_at', 'items', 'subtotal_cents', 'shipping_cents', 'total_cents',
    'paid_cents', 'refunded_cents', 'refundable_cents', 'payment', 'shipping_address', 'estimated_ship_date', 'shipment',
    'delivered_at', 'return_by', 'returnable', 'cancelled_at', 'cancel_reason', 'return_ids', 'refund_ids',
  ],
);

const orderSummary: JsonObject = resultSchema(
  {
    order_id: { type: 'string' },
    status,
    placed_at: dateTime,
    total_cents: cents,
    items: {
      type: 'array',
      items: resultSchema({ sku: { type: 'string' }, name: { type: 'string' }, quantity: { type: 'integer' } }, ['sku', 'name', 'quantity']),
    },
    carrier: { type: ['string', 'null'] },
    tracking_number: { type: ['string', 'null'] },
  },
  ['order_id', 'status', 'placed_at', 'total_cents', 'items', 'carrier', 'tracking_number'],
);

const refundOut: JsonObject = resultSchema(
  {
    refund_id: { type: 'string', pattern: '^RF-[0-9]+$' },
    order_id: { type: 'string' },
    customer_id: { type: 'string' },
    amount_cents: { type: 'integer', minimum: 1 },
    amount: money,
    method: { type: 'string', enum: [...REFUND_METHODS] },
    destination: { type: 'string' },
    reason: { type: 'string', enum: [...REFUND_REASONS] },
    note: { type: ['string', 'null'] },
    created_at: dateTime,
  },
  ['refund_id', 'order_id', 'amount_cents', 'amount', 'method', 'destination', 'reason', 'created_at'],
);

const returnOut: JsonObject = resultSchema(
  {
    return_id: { type: 'string', pattern: '^RMA-[0-9]+$' },
    order_id: { type: 'string' },
    customer_id: { type: 'string' },
    scope: { type: 'string', enum: [...RETURN_SCOPES] },
    items: {
      type: 'array',
      minItems: 1,
      items: resultSchema({ sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } }, ['sku', 'quantity']),
    },
    reason: { type: 'string', enum: [...RETURN_REASONS] },
    note: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['authorized', 'refunded'] },
    created_at: dateTime,
    ship_back_by: date,
    refund_due_cents: cents,
    refund_due: money,
  },
  ['return_id', 'order_id', 'scope', 'items', 'reason', 'status', 'created_at', 'ship_back_by', 'refund_due_cents', 'refund_due'],
);

export const SHOP_TOOLS: readonly ToolSpec[] = [
  {
    name: 'find_customer',
    claims: [`${CLAIM_SUBJECT}(?:looked up|found|pulled up)\\s+(?:your|the)\\s+(?:customer\\s+)?(?:account|profile|customer record)\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Find a customer by email address (case-insensitive). Returns their customer id, name, contact details, default ' +
      'address, saved cards (brand and last four digits) and store credit balance. Use the customer id with list_orders.',
    inputSchema: objectSchema({ email: { type: 'string', format: 'email', maxLength: 254, description: "The customer's email address." } }, ['email']),
    outputSchema: resultSchema(
      {
        customer: resultSchema(
          {
            customer_id: { type: 'string' },
            name: { type: 'string' },
            email: { type: 'string', format: 'email' },
            phone: { type: 'string' },
            default_address: addressOut,
            cards: {
              type: 'array',
              items: resultSchema({ brand: { type: 'string' }, last4: { type: 'string', pattern: '^[0-9]{4}$' } }, ['brand', 'last4']),
            },
            store_credit_cents: cents,
            member_since: date,
            order_count: cents,
          },
          ['customer_id', 'name', 'email', 'default_address', 'cards', 'store_credit_cents', 'order_count'],
        ),
      },
      ['customer'],
    ),
  },
  {
    name: 'list_orders',
    claims: [`${CLAIM_SUBJECT}(?:listed|went through|looked through|reviewed)\\s+(?:all\\s+)?(?:your|the customer's|their)\\s+(?:\\w+\\s+)?orders\\b`],
    annotations: { readOnlyHint: true },
    description:
      "List a customer's orders, newest first, optionally only those in one status. Each entry has the order id, status, " +
      'date, total, items and (once shipped) carrier and tracking number. `totals` sums every matching order (not only ' +
      'the listed page): what was paid, what was refunded, and the net amount spent.',
    inputSchema: objectSchema(
      {
        customer_id: customerId,
        status: { ...status, description: 'Only orders in this status.' },
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 20, description: 'Most orders to return (1-50, default 20).' },
      },
      ['customer_id'],
    ),
    outputSchema: resultSchema(
      {
        customer_id: { type: 'string' },
        total_count: cents,
        orders: { type: 'array', items: orderSummary },
        totals: resultSchema(
          { paid_cents: cents, refunded_cents: cents, net_spent_cents: cents, paid: money, refunded: money, net_spent: money },
          ['paid_cents', 'refunded_cents', 'net_spent_cents', 'paid', 'refunded', 'net_spent'],
        ),
      },
      ['customer_id', 'total_count', 'orders', 'totals'],
    ),
  },
  {
    name: 'get_order',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked at|looked up|pulled up|reviewed)\\s+(?:the\\s+|your\\s+)?order\\b`],
    annotations: { readOnlyHint: true },
    description:
      'Get one order by id: status, items (SKU, quantity, prices in cents, quantity already returned), amounts paid and ' +
      'refunded and what can still be refunded, the payment method, the shipping address, the shipment (carrier, ' +
      'tracking number, ship date), the delivery date and the last day it can be returned (return_by; returns are ' +
      'accepted within 30 days of delivery), and its returns and refunds.',
    inputSchema: objectSchema({ order_id: orderId }, ['order_id']),
    outputSchema: resultSchema({ order }, ['order']),
  },
  {
    name: 'get_product',
    claims: [`${CLAIM_SUBJECT}(?:checked|looked up)\\s+(?:the\\s+)?(?:stock|inventory|product|price)\\b`],
    annotations: { readOnlyHint: true },
    description: 'Get a product by SKU: its name, category, current price and how many units are in stock.',
    inputSchema: objectSchema({ sku }, ['sku']),
    outputSchema: resultSchema(
      {
        product: resultSchema(
          {
            sku: { type: 'string' },
            name: { type: 'string' },
            category: { type: 'string' },
            price_cents: cents,
            price: money,
            stock: cents,
            in_stock: { type: 'boolean' },
          },
          ['sku', 'name', 'category', 'price_cents', 'price', 'stock', 'in_stock'],
        ),
      },
      ['product'],
    ),
  },
  {
    name: 'cancel_order',
    claims: [
      `${CLAIM_SUBJECT}cancell?ed\\b`,
      '\\border\\s+\\S+\\s+(?:has been|is now|was)\\s+cancell?ed\\b',
      '^cancell?ed\\s+(?:your\\s+|the\\s+)?order\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Cancel an order that has not shipped yet (status pending or paid). Cancelling a paid order refunds the full ' +
      'payment automatically to the original payment method; the items go back into stock. Policy: a shipped order ' +
      'cannot be cancelled; a delivered order cannot be cancelled either, it can only be returned (create_return) within ' +
      '30 days of delivery.',
    inputSchema: objectSchema(
      {
        order_id: orderId,
        reason: { type: 'string', enum: [...CANCEL_REASONS], description: 'Why the customer is cancelling.' },
      },
      ['order_id', 'reason'],
    ),
    outputSchema: resultSchema({ order, refund: nullable(refundOut) }, ['order', 'refund']),
  },
  {
    name: 'update_shipping_address',
    claims: [
      `${CLAIM_SUBJECT}(?:updated|changed|corrected)\\s+(?:the\\s+|your\\s+)?(?:shipping\\s+|delivery\\s+)?address\\b`,
      '\\baddress\\s+(?:has been|is now|was)\\s+(?:updated|changed)\\b',
      '^(?:updated|changed)\\s+(?:the\\s+)?(?:shipping\\s+|delivery\\s+)?address\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      "Replace the shipping address of an order that has not shipped yet (status pending or paid). The customer's default " +
      'address is not changed. The postal code must be in the country\'s format, and US, CA and AU addresses need a ' +
      'region code. Policy: once an order has shipped its address cannot be changed; give the customer the carrier and ' +
      'tracking number instead.',
    inputSchema: objectSchema({ order_id: orderId, address: addressIn }, ['order_id', 'address']),
    outputSchema: resultSchema({ order }, ['order']),
  },
  {
    name: 'create_return',
    claims: [
      `${CLAIM_SUBJECT}(?:opened|created|started|set up|authori[sz]ed|registered)\\s+(?:a\\s+|the\\s+)?return\\b`,
      '\\breturn\\s+(?:RMA-\\d+\\s+)?(?:has been|is now|was)\\s+(?:opened|created|authori[sz]ed)\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Open a return for a delivered order, within 30 days of delivery. With scope "entire_order" every item not yet ' +
      'returned is included (leave out `items`); with scope "selected_items" list each SKU and how many units. The ' +
      'customer ships the items back by ship_back_by; the refund (refund_due) is paid to the original payment method ' +
      'when they arrive, so do not issue a refund yourself when opening a return.',
    inputSchema: {
      ...objectSchema(
        {
          order_id: orderId,
          scope: { type: 'string', enum: [...RETURN_SCOPES], description: 'entire_order, or selected_items with `items`.' },
          items: {
            type: 'array',
            minItems: 1,
            maxItems: 10,
            description: 'The lines to return (scope selected_items only).',
            items: objectSchema(
              { sku, quantity: { type: 'integer', minimum: 1, maximum: 20, description: 'Units of this SKU to return.' } },
              ['sku', 'quantity'],
            ),
          },
          reason: { type: 'string', enum: [...RETURN_REASONS] },
          note: { type: 'string', maxLength: 500, description: "The customer's own words, optional." },
        },
        ['order_id', 'scope', 'reason'],
      ),
      // Only the "items needed" half is schema: the world answers items sent
      // with entire_order with a clearer message than a failed `else` would.
      if: { properties: { scope: { const: 'selected_items' } }, required: ['scope'] },
      then: { required: ['items'] },
    },
    outputSchema: resultSchema({ return: returnOut, order }, ['return', 'order']),
  },
  {
    name: 'refund',
    claims: [
      `${CLAIM_SUBJECT}(?:refunded|issued\\s+(?:a\\s+|the\\s+|your\\s+)?refund|processed\\s+(?:a\\s+|the\\s+|your\\s+)?refund)\\b`,
      '\\brefund\\s+(?:RF-\\d+\\s+|of\\s+\\$?[0-9.,]+\\s+)?(?:has been|was)\\s+(?:issued|processed|sent)\\b',
      '^refunded\\b',
    ],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    description:
      'Refund part or all of what was paid for an order, in cents. Policy: refunds go to the original payment method ' +
      'only: method "card" for an order paid by card, "store_credit" for an order paid with store credit. The amount ' +
      'cannot exceed what was paid minus earlier refunds (refundable_cents in get_order). Damaged or missing items may ' +
      'be refunded without a return, for that line\'s total.',
    inputSchema: objectSchema(
      {
        order_id: orderId,
        amount_cents: { type: 'integer', minimum: 1, maximum: 10_000_000, description: 'Amount in cents, e.g. 2499 for $24.99.' },
        method: { type: 'string', enum: [...REFUND_METHODS], description: 'Where the money goes.' },
        reason: { type: 'string', enum: [...REFUND_REASONS] },
        note: { type: 'string', maxLength: 500 },
      },
      ['order_id', 'amount_cents', 'method', 'reason'],
    ),
    outputSchema: resultSchema(
      {
        refund: refundOut,
        order: resultSchema({ order_id: { type: 'string' }, paid_cents: cents, refunded_cents: cents, refundable_cents: cents }, [
          'order_id',
          'paid_cents',
          'refunded_cents',
          'refundable_cents',
        ]),
      },
      ['refund', 'order'],
    ),
  },
];
