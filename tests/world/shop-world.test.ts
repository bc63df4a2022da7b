import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { canonicalJson } from '../../src/core/canonical-json.js';
import type { JsonObject } from '../../src/core/json-value.js';
import { substream } from '../../src/core/random.js';
import { compileValidator } from '../../src/core/schema-validator.js';
import { createWorldServer } from '../../src/world/mcp-server-binding.js';
import type { Order, ShopState } from '../../src/world/shop/shop-state.js';
import { shopWorld } from '../../src/world/shop/shop-world.js';

const fresh = (seed = 1, config: JsonObject = {}): ShopState => shopWorld.init(substream(seed, 'world'), config);
const text = (state: ShopState) => canonicalJson(shopWorld.snapshot(state));
const ok = (outcome: ReturnType<typeof shopWorld.call>) => {
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.message);
  return outcome.value as any;
};

/** Calls a tool that must fail, and checks the failure changed nothing. */
function refused(state: ShopState, tool: string, args: JsonObject): string {
  const before = text(state);
  const outcome = shopWorld.call(state, tool, args);
  assert.equal(outcome.ok, false, `${tool} should have been refused`);
  assert.equal(text(state), before, `a refused ${tool} changed the world`);
  return (outcome as { message: string }).message;
}

const orders = (state: ShopState) => [...state.orders.values()];
const find = (state: ShopState, test: (order: Order) => boolean): Order => {
  const order = orders(state).find(test);
  assert.ok(order, 'no order of the wanted kind');
  return order;
};
const returnable = (state: ShopState, order: Order) => (shopWorld.snapshot(state) as any).orders[order.order_id].returnable as boolean;
const newAddress = {
  recipient: 'Test Person',
  line1: '418 Quarry Hill Road',
  line2: 'Unit 12',
  city: 'Burlington',
  region: 'VT',
  postal_code: '05401',
  country: 'US',
};

describe('shop world state', () => {
  it('is the same for the same seed and different for another', () => {
    assert.equal(text(fresh(5)), text(fresh(5)));
    assert.notEqual(text(fresh(5)), text(fresh(6)));
  });

  it('draws ids, emails, card digits and tracking numbers from the seed', () => {
    const a = fresh(1);
    const b = fresh(2);
    const emails = (state: ShopState) => new Set([...state.customers.values()].map((customer) => customer.email));
    const ids = (state: ShopState) => new Set(orders(state).map((order) => order.order_id));
    assert.equal([...emails(a)].filter((email) => emails(b).has(email)).length, 0);
    assert.equal([...ids(a)].filter((id) => ids(b).has(id)).length, 0);
    for (const customer of a.customers.values()) {
      assert.match(customer.customer_id, /^cus_[0-9a-f]{10}$/);
      assert.match(customer.email, /^[a-z]+\.[a-z]+[0-9]{2}@[a-z.]+$/);
      for (const card of customer.cards) assert.match(card.last4, /^[0-9]{4}$/);
    }
    for (const order of orders(a)) {
      assert.match(order.order_id, /^ORD-[0-9]{6}$/);
      assert.equal(order.total_cents, order.subtotal_cents + order.shipping_cents);
      assert.ok(order.refunded_cents <= order.paid_cents);
      if (order.shipment) assert.ok(order.shipment.tracking_number.length >= 12);
    }
    assert.equal(fresh(3, { customers: 5 }).customers.size, 5);
  });

  it('gives every customer the kinds of order the lane tasks need, on every seed', () => {
    for (const seed of [0, 1, 2, 3, 4, 5, 6, 7]) {
      const state = fresh(seed);
      assert.equal(state.customers.size, 8);
      let shippedOwners = 0;
      for (const customer of state.customers.values()) {
        const own = orders(state).filter((order) => order.customer_id === customer.customer_id);
        const count = (status: string) => own.filter((order) => order.status === status).length;
        const recent = own.filter((order) => order.status === 'delivered' && returnable(state, order));
        assert.ok(recent.length >= 1 && recent.every((order) => order.items.length >= 2), `seed ${seed}: a recent multi-item delivery`);
        assert.ok(own.some((order) => order.status === 'delivered' && !returnable(state, order)), `seed ${seed}: an old delivery`);
        assert.equal(count('paid'), 1);
        assert.ok(count('pending') <= 1 && count('shipped') <= 1);
        if (count('shipped') === 1) shippedOwners++;
        assert.ok(own.some((order) => order.refunded_cents > 0), `seed ${seed}: every customer has had a refund`);
        for (const order of own) {
          const totals = order.items.map((line) => line.line_total_cents);
          assert.equal(new Set(totals).size, totals.length, 'line totals of an order are distinct');
        }
      }
      assert.ok(shippedOwners >= 2);
      assert.ok(orders(state).some((order) => order.status === 'paid' && order.payment.method === 'card'));
      assert.ok(orders(state).some((order) => order.status === 'delivered' && order.payment.method === 'card' && returnable(state, order)));
      const products = [...state.products.values()];
      const priceParts = new Set(products.flatMap((product) => [Math.floor(product.price_cents / 100), product.price_cents % 100]));
      assert.equal(new Set(products.map((product) => product.stock)).size, products.length, 'stock counts are distinct');
      assert.equal(new Set(products.map((product) => product.price_cents)).size, products.length, 'prices are distinct');
      assert.ok(products.every((product) => !priceParts.has(product.stock)), 'no stock count appears inside a price');
    }
  });

  it('takes snapshots that do not change when the state does', () => {
    const state = fresh(2);
    const before = shopWorld.snapshot(state);
    const frozen = canonicalJson(before);
    const order = find(state, (candidate) => candidate.status === 'pending');
    ok(shopWorld.call(state, 'cancel_order', { order_id: order.order_id, reason: 'ordered_by_mistake' }));
    assert.equal(canonicalJson(before), frozen);
    assert.notEqual(text(state), frozen);
    (shopWorld.snapshot(state) as any).orders[order.order_id].items[0].quantity = 99;
    assert.notEqual(order.items[0]!.quantity, 99);
  });
});

describe('shop world tools', () => {
  it('returns results that satisfy every tool output schema', () => {
    const state = fresh(4);
    const validators = new Map(shopWorld.tools.map((tool) => [tool.name, compileValidator(tool.outputSchema!)]));
    const check = (tool: string, args: JsonObject) => {
      const value = ok(shopWorld.call(state, tool, args));
      assert.deepEqual(validators.get(tool)!(value), [], `${tool} result breaks its output schema`);
      return value;
    };
    const customer = [...state.customers.values()][0]!;
    const me = check('find_customer', { email: customer.email.toUpperCase() });
    assert.equal(me.customer.customer_id, customer.customer_id);
    check('list_orders', { customer_id: customer.customer_id });
    check('list_orders', { customer_id: customer.customer_id, status: 'delivered', limit: 1 });
    check('get_product', { sku: [...state.products.keys()][0]! });
    for (const order of orders(state)) check('get_order', { order_id: order.order_id });
    const paid = find(state, (order) => order.status === 'paid');
    const pending = find(state, (order) => order.status === 'pending');
    check('update_shipping_address', { order_id: pending.order_id, address: newAddress });
    check('cancel_order', { order_id: paid.order_id, reason: 'changed_mind' });
    check('cancel_order', { order_id: pending.order_id, reason: 'ordered_by_mistake' });
    const delivered = find(state, (order) => order.status === 'delivered' && returnable(state, order));
    check('refund', { order_id: delivered.order_id, amount_cents: 100, method: 'card', reason: 'price_adjustment' });
    check('create_return', { order_id: delivered.order_id, scope: 'selected_items', items: [{ sku: delivered.items[0]!.sku, quantity: 1 }], reason: 'defective' });
    check('create_return', { order_id: delivered.order_id, scope: 'entire_order', reason: 'no_longer_needed' });
  });

  it('lists a customer\'s orders newest first, filters by status, and totals paid minus refunded', () => {
    const state = fresh(5);
    const customer = [...state.customers.values()][1]!;
    const all = ok(shopWorld.call(state, 'list_orders', { customer_id: customer.customer_id }));
    const own = orders(state).filter((order) => order.customer_id === customer.customer_id);
    assert.equal(all.total_count, own.length);
    const dates = all.orders.map((order: any) => order.placed_at);
    assert.deepEqual(dates, [...dates].sort().reverse());
    const paid = own.reduce((sum, order) => sum + order.paid_cents, 0);
    const refunded = own.reduce((sum, order) => sum + order.refunded_cents, 0);
    assert.equal(all.totals.net_spent_cents, paid - refunded);
    const spending = (shopWorld.snapshot(state) as any).spending[customer.customer_id];
    assert.equal(spending.net_spent_cents, paid - refunded);
    assert.equal(all.totals.net_spent, `$${spending.net_spent}`);
    const delivered = ok(shopWorld.call(state, 'list_orders', { customer_id: customer.customer_id, status: 'delivered' }));
    assert.ok(delivered.orders.every((order: any) => order.status === 'delivered'));
    assert.ok(delivered.totals.net_spent_cents < all.totals.net_spent_cents);
    assert.match(refused(state, 'find_customer', { email: 'nobody@example.com' }), /No customer with email nobody@example.com/);
    assert.match(refused(state, 'list_orders', { customer_id: 'cus_0000000000' }), /find_customer/);
    assert.match(refused(state, 'get_order', { order_id: 'ORD-000001' }), /Order ORD-000001 not found/);
  });

  it('cancels a pending order without a refund and a paid one with a full refund to the card', () => {
    const state = fresh(6);
    const pending = find(state, (order) => order.status === 'pending');
    const stock = state.products.get(pending.items[0]!.sku)!.stock;
    const first = ok(shopWorld.call(state, 'cancel_order', { order_id: pending.order_id, reason: 'ordered_by_mistake' }));
    assert.equal(first.order.status, 'cancelled');
    assert.equal(first.refund, null);
    assert.equal(state.products.get(pending.items[0]!.sku)!.stock, stock + pending.items[0]!.quantity);
    const paid = find(state, (order) => order.status === 'paid' && order.payment.method === 'card');
    const second = ok(shopWorld.call(state, 'cancel_order', { order_id: paid.order_id, reason: 'found_better_price' }));
    assert.equal(second.refund.amount_cents, paid.total_cents);
    assert.equal(second.refund.method, 'card');
    assert.match(second.refund.destination, new RegExp(`ending ${(paid.payment as any).last4}$`));
    assert.equal(second.order.refundable_cents, 0);
    assert.match(refused(state, 'cancel_order', { order_id: paid.order_id, reason: 'other' }), /was cancelled on .* cannot be cancelled/);
  });

  it('refuses to cancel a shipped or delivered order, naming what is allowed instead', () => {
    const state = fresh(7);
    const shipped = find(state, (order) => order.status === 'shipped');
    const message = refused(state, 'cancel_order', { order_id: shipped.order_id, reason: 'changed_mind' });
    assert.ok(message.includes(shipped.shipment!.tracking_number));
    assert.match(message, /can no longer be cancelled.*create_return/);
    const delivered = find(state, (order) => order.status === 'delivered' && returnable(state, order));
    assert.match(refused(state, 'cancel_order', { order_id: delivered.order_id, reason: 'changed_mind' }), /cannot be cancelled\. A delivered order can only be returned, with create_return; the 30-day return window is open until \d{4}-\d{2}-\d{2}/);
    const returned = orders(state).find((order) => order.status === 'returned');
    if (returned) assert.match(refused(state, 'cancel_order', { order_id: returned.order_id, reason: 'other' }), /returned in full/);
  });

  it('changes the address only of unshipped orders, in the country\'s postal format', () => {
    const state = fresh(8);
    const paid = find(state, (order) => order.status === 'paid');
    const customer = state.customers.get(paid.customer_id)!;
    const saved = structuredClone(customer.default_address);
    const updated = ok(shopWorld.call(state, 'update_shipping_address', { order_id: paid.order_id, address: { ...newAddress, postal_code: '05401' } }));
    assert.deepEqual(updated.order.shipping_address, newAddress);
    assert.deepEqual(customer.default_address, saved, 'the default address is not changed');
    const { line2: _line2, ...noApartment } = newAddress;
    assert.equal(ok(shopWorld.call(state, 'update_shipping_address', { order_id: paid.order_id, address: noApartment })).order.shipping_address.line2, null);
    assert.match(refused(state, 'update_shipping_address', { order_id: paid.order_id, address: { ...newAddress, postal_code: 'K1A 0B1' } }), /not a valid US postal code \(expected the format of 94107\)/);
    const { region: _region, ...noRegion } = newAddress;
    assert.match(refused(state, 'update_shipping_address', { order_id: paid.order_id, address: noRegion }), /address\.region: a US address needs a region code/);
    assert.ok(ok(shopWorld.call(state, 'update_shipping_address', { order_id: paid.order_id, address: { ...noRegion, country: 'GB', city: 'Leeds', postal_code: 'ls1 4ap' } })).order.shipping_address.postal_code === 'LS1 4AP');
    const shipped = find(state, (order) => order.status === 'shipped');
    const message = refused(state, 'update_shipping_address', { order_id: shipped.order_id, address: newAddress });
    assert.match(message, /address can no longer be changed/);
    assert.ok(message.includes(shipped.shipment!.tracking_number) && message.includes(shipped.shipment!.carrier));
    const delivered = find(state, (order) => order.status === 'delivered');
    assert.match(refused(state, 'update_shipping_address', { order_id: delivered.order_id, address: newAddress }), /was delivered on/);
  });

  it('opens returns inside the 30-day window only, for items and quantities on the order', () => {
    const state = fresh(9);
    const recent = find(state, (order) => order.status === 'delivered' && returnable(state, order));
    const [first, second] = recent.items;
    const foreign = [...state.products.keys()].find((sku) => !recent.items.some((line) => line.sku === sku))!;
    assert.match(refused(state, 'create_return', { order_id: recent.order_id, scope: 'selected_items', items: [{ sku: foreign, quantity: 1 }], reason: 'defective' }), /is not on order/);
    assert.match(refused(state, 'create_return', { order_id: recent.order_id, scope: 'selected_items', items: [{ sku: first!.sku, quantity: first!.quantity + 1 }], reason: 'defective' }), /only \d unit\(s\) .* can still be returned/);
    assert.match(refused(state, 'create_return', { order_id: recent.order_id, scope: 'selected_items', items: [{ sku: first!.sku, quantity: 1 }, { sku: first!.sku, quantity: 1 }], reason: 'defective' }), /listed twice/);
    assert.match(refused(state, 'create_return', { order_id: recent.order_id, scope: 'entire_order', items: [{ sku: first!.sku, quantity: 1 }], reason: 'defective' }), /leave items out/);
    assert.match(refused(state, 'create_return', { order_id: recent.order_id, scope: 'selected_items', reason: 'defective' }), /items: required/);

    const one = ok(shopWorld.call(state, 'create_return', { order_id: recent.order_id, scope: 'selected_items', items: [{ sku: second!.sku, quantity: second!.quantity }], reason: 'defective' }));
    assert.match(one.return.return_id, /^RMA-\d+$/);
    assert.equal(one.return.refund_due_cents, second!.line_total_cents);
    assert.equal(one.order.status, 'delivered');
    const rest = ok(shopWorld.call(state, 'create_return', { order_id: recent.order_id, scope: 'entire_order', reason: 'no_longer_needed' }));
    assert.ok(!rest.return.items.some((item: any) => item.sku === second!.sku));
    assert.equal(rest.order.status, 'returned');
    assert.equal(rest.order.refunded_cents, 0, 'opening a return refunds nothing');
    assert.match(refused(state, 'create_return', { order_id: recent.order_id, scope: 'entire_order', reason: 'defective' }), /already been returned/);

    const old = find(state, (order) => order.status === 'delivered' && !returnable(state, order));
    const view = ok(shopWorld.call(state, 'get_order', { order_id: old.order_id })).order;
    assert.equal(view.returnable, false);
    assert.match(refused(state, 'create_return', { order_id: old.order_id, scope: 'entire_order', reason: 'defective' }), new RegExp(`window closed on ${view.return_by}, so it can no longer be returned`));
    const paid = find(state, (order) => order.status === 'paid');
    assert.match(refused(state, 'create_return', { order_id: paid.order_id, scope: 'entire_order', reason: 'defective' }), /cancel_order instead/);
    const shipped = find(state, (order) => order.status === 'shipped');
    assert.match(refused(state, 'create_return', { order_id: shipped.order_id, scope: 'entire_order', reason: 'defective' }), /not delivered yet/);
  });

  it('never refunds more than was paid minus earlier refunds', () => {
    const state = fresh(10);
    const old = find(state, (order) => order.status === 'delivered' && order.refunded_cents > 0);
    const left = old.paid_cents - old.refunded_cents;
    const message = refused(state, 'refund', { order_id: old.order_id, amount_cents: left + 1, method: old.payment.method, reason: 'goodwill' });
    assert.match(message, new RegExp(`at most \\$[0-9,.]+ \\(${left} cents\\) can be refunded`));
    const done = ok(shopWorld.call(state, 'refund', { order_id: old.order_id, amount_cents: left, method: old.payment.method, reason: 'goodwill' }));
    assert.equal(done.order.refundable_cents, 0);
    assert.match(refused(state, 'refund', { order_id: old.order_id, amount_cents: 1, method: old.payment.method, reason: 'goodwill' }), /at most \$0\.00/);
    const pending = find(state, (order) => order.status === 'pending');
    assert.match(refused(state, 'refund', { order_id: pending.order_id, amount_cents: 100, method: 'card', reason: 'other' }), /has not been paid/);
  });

  it('refunds a store-credit order only as store credit, but accepts store credit for a card order (policy, not a world rule)', () => {
    const state = fresh(11);
    const byCredit = orders(state).find((order) => order.payment.method === 'store_credit' && order.paid_cents > order.refunded_cents);
    if (byCredit) {
      assert.match(refused(state, 'refund', { order_id: byCredit.order_id, amount_cents: 1, method: 'card', reason: 'other' }), /paid with store credit.*"store_credit"/);
    }
    const byCard = find(state, (order) => order.status === 'delivered' && order.payment.method === 'card' && returnable(state, order));
    const customer = state.customers.get(byCard.customer_id)!;
    const credit = customer.store_credit_cents;
    const refund = ok(shopWorld.call(state, 'refund', { order_id: byCard.order_id, amount_cents: 500, method: 'store_credit', reason: 'damaged_item' }));
    assert.equal(refund.refund.destination, 'store credit');
    assert.equal(refund.refund.amount, '$5.00');
    assert.equal(customer.store_credit_cents, credit + 500);
  });

  it('stamps writes with the world clock, deterministically', () => {
    const a = fresh(12);
    const b = fresh(12);
    const id = find(a, (order) => order.status === 'paid').order_id;
    const first = ok(shopWorld.call(a, 'cancel_order', { order_id: id, reason: 'other' }));
    assert.deepEqual(ok(shopWorld.call(b, 'cancel_order', { order_id: id, reason: 'other' })), first);
    assert.ok(first.order.cancelled_at > (shopWorld.snapshot(fresh(12)) as any).now);
  });
});

describe('shop world served over MCP (real SDK client and server)', () => {
  async function connect(seed = 1) {
    const state = fresh(seed);
    const server = createWorldServer({ world: shopWorld, state });
    // The SDK client's own validator checks structuredContent against each tool's output schema.
    const client = new Client({ name: 'shop-test', version: '1' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    await client.connect(clientTransport);
    return { state, client, close: async () => { await client.close(); await server.close(); } };
  }

  it('lists the tools and answers calls with structured content the client accepts', async () => {
    const { client, close, state } = await connect(2);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), ['find_customer', 'list_orders', 'get_order', 'get_product', 'cancel_order', 'update_shipping_address', 'create_return', 'refund']);
      for (const tool of tools) {
        assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
        assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean');
      }
      const customer = [...state.customers.values()][0]!;
      const found = await client.callTool({ name: 'find_customer', arguments: { email: customer.email } });
      assert.equal(found.isError, undefined);
      const id = (found.structuredContent as any).customer.customer_id;
      const listed = await client.callTool({ name: 'list_orders', arguments: { customer_id: id, status: 'paid' } });
      const orderId = (listed.structuredContent as any).orders[0].order_id;
      const cancelled = await client.callTool({ name: 'cancel_order', arguments: { order_id: orderId, reason: 'changed_mind' } });
      assert.equal((cancelled.structuredContent as any).order.status, 'cancelled');
      assert.deepEqual(JSON.parse((cancelled.content as any)[0].text), cancelled.structuredContent);
      assert.equal(state.orders.get(orderId)!.status, 'cancelled');
    } finally {
      await close();
    }
  });

  it('answers bad arguments and rule violations with isError results', async () => {
    const { client, close, state } = await connect(3);
    try {
      const bad = await client.callTool({ name: 'update_shipping_address', arguments: { order_id: 'ORD-1', address: { line1: 'x', country: 'XX' } } });
      assert.equal(bad.isError, true);
      const message = (bad.content as any)[0].text as string;
      for (const part of ['order_id', 'address.recipient', 'address.country']) assert.ok(message.includes(part), `${message} names ${part}`);
      const noItems = await client.callTool({ name: 'create_return', arguments: { order_id: 'ORD-123456', scope: 'selected_items', reason: 'defective' } });
      assert.equal(noItems.isError, true);
      assert.match((noItems.content as any)[0].text, /items/);
      const shipped = find(state, (order) => order.status === 'shipped');
      const before = text(state);
      const locked = await client.callTool({ name: 'cancel_order', arguments: { order_id: shipped.order_id, reason: 'changed_mind' } });
      assert.equal(locked.isError, true);
      assert.match((locked.content as any)[0].text, /can no longer be cancelled/);
      assert.equal(text(state), before);
    } finally {
      await close();
    }
  });
});
