// Owns the words and fixed tables the shop world builds its seeded state from:
// names, places, the product catalog, carriers, and the enums that tool schemas
// and the world's rules share (statuses, reasons, countries, postal formats).

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled', 'returned'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const CANCEL_REASONS = [
  'ordered_by_mistake',
  'changed_mind',
  'found_better_price',
  'shipping_too_slow',
  'payment_problem',
  'other',
] as const;

export const RETURN_REASONS = [
  'defective',
  'damaged_in_transit',
  'wrong_item',
  'not_as_described',
  'no_longer_needed',
  'does_not_fit',
] as const;

export const RETURN_SCOPES = ['entire_order', 'selected_items'] as const;

export const REFUND_REASONS = [
  'damaged_item',
  'missing_item',
  'late_delivery',
  'price_adjustment',
  'returned_items',
  'order_cancelled',
  'goodwill',
  'other',
] as const;

/** Where a refund's money goes; policy says: the order's own payment method. */
export const REFUND_METHODS = ['card', 'store_credit'] as const;

export const COUNTRIES = ['US', 'CA', 'GB', 'IE', 'DE', 'FR', 'NL', 'AU'] as const;
export type Country = (typeof COUNTRIES)[number];

/**
 * Postal code formats per country, checked by the world (a schema pattern can
 * only say what every country's codes have in common). `example` is quoted in
 * the error so a caller can see the expected shape.
 */
export const POSTAL_FORMATS: Record<Country, { pattern: RegExp; example: string; region: boolean }> = {
  US: { pattern: /^\d{5}(-\d{4})?$/, example: '94107', region: true },
  CA: { pattern: /^[A-Z]\d[A-Z] ?\d[A-Z]\d$/, example: 'M5V 2T6', region: true },
  GB: { pattern: /^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$/, example: 'SW1A 1AA', region: false },
  IE: { pattern: /^[A-Z]\d[\dW] ?[A-Z\d]{4}$/, example: 'D02 X285', region: false },
  DE: { pattern: /^\d{5}$/, example: '10115', region: false },
  FR: { pattern: /^\d{5}$/, example: '75011', region: false },
  NL: { pattern: /^\d{4} ?[A-Z]{2}$/, example: '1017 CE', region: false },
  AU: { pattern: /^\d{4}$/, example: '2000', region: true },
};

/** Cities customers live in; postal codes are drawn in each country's format. */
export const CITIES: readonly { city: string; region: string | null; country: Country }[] = [
  { city: 'Portland', region: 'OR', country: 'US' },
  { city: 'Austin', region: 'TX', country: 'US' },
  { city: 'Columbus', region: 'OH', country: 'US' },
  { city: 'Raleigh', region: 'NC', country: 'US' },
  { city: 'Madison', region: 'WI', country: 'US' },
  { city: 'Tucson', region: 'AZ', country: 'US' },
  { city: 'Halifax', region: 'NS', country: 'CA' },
  { city: 'Winnipeg', region: 'MB', country: 'CA' },
  { city: 'Leeds', region: null, country: 'GB' },
  { city: 'Galway', region: null, country: 'IE' },
  { city: 'Leipzig', region: null, country: 'DE' },
  { city: 'Utrecht', region: null, country: 'NL' },
  { city: 'Hobart', region: 'TAS', country: 'AU' },
];

export const STREETS = [
  'Alder Street',
  'Birchwood Lane',
  'Cobalt Avenue',
  'Dunmore Road',
  'Elmstead Way',
  'Fernhill Drive',
  'Garnet Close',
  'Hollis Court',
  'Juniper Terrace',
  'Kestrel Row',
  'Larkspur Place',
  'Millbrook Road',
] as const;

export const FIRST_NAMES = [
  'ada', 'bruno', 'celine', 'darius', 'elif', 'fionn', 'greta', 'hugo',
  'ilse', 'joaquin', 'kaia', 'leon', 'mireille', 'nikhil', 'odette', 'pavel',
  'quinn', 'rosalind', 'soren', 'thea',
] as const;

export const LAST_NAMES = [
  'abernathy', 'bakshi', 'carvalho', 'delacroix', 'eriksen', 'fontaine', 'gallagher', 'hoshino',
  'ivanova', 'jankowski', 'kimura', 'lindgren', 'mbeki', 'nakamura', 'oyelaran', 'petrov',
  'quintero', 'rasmussen', 'szabo', 'thorne',
] as const;

export const EMAIL_DOMAINS = ['example.com', 'example.net', 'example.org', 'mail.example.com', 'post.example.net'] as const;

export const STORE_NAMES = ['Harrow & Finch', 'Tidewater Supply', 'Quillon Goods', 'Northgate Outfitters', 'Bramble Home'] as const;

export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover'] as const;

export const CARRIERS = ['UPS', 'USPS', 'FedEx', 'DHL'] as const;
export type Carrier = (typeof CARRIERS)[number];

/** Catalog entries: SKU prefix by category, and a price band in whole dollars. */
export const PRODUCTS: readonly { name: string; category: string; prefix: string; dollars: [number, number] }[] = [
  { name: 'Wireless Earbuds', category: 'audio', prefix: 'AUD', dollars: [49, 129] },
  { name: 'Over-Ear Headphones', category: 'audio', prefix: 'AUD', dollars: [89, 249] },
  { name: 'Bluetooth Speaker', category: 'audio', prefix: 'AUD', dollars: [39, 149] },
  { name: 'Mechanical Keyboard', category: 'computing', prefix: 'CMP', dollars: [69, 189] },
  { name: 'Ergonomic Mouse', category: 'computing', prefix: 'CMP', dollars: [29, 89] },
  { name: 'USB-C Docking Station', category: 'computing', prefix: 'CMP', dollars: [99, 229] },
  { name: '27-inch Monitor Arm', category: 'computing', prefix: 'CMP', dollars: [45, 139] },
  { name: 'Cast Iron Skillet', category: 'kitchen', prefix: 'KIT', dollars: [24, 69] },
  { name: 'Pour-Over Coffee Kettle', category: 'kitchen', prefix: 'KIT', dollars: [35, 95] },
  { name: 'Chef Knife', category: 'kitchen', prefix: 'KIT', dollars: [45, 179] },
  { name: 'Bamboo Cutting Board', category: 'kitchen', prefix: 'KIT', dollars: [19, 59] },
  { name: 'Linen Duvet Cover', category: 'home', prefix: 'HOM', dollars: [79, 199] },
  { name: 'Wool Throw Blanket', category: 'home', prefix: 'HOM', dollars: [49, 139] },
  { name: 'Ceramic Table Lamp', category: 'home', prefix: 'HOM', dollars: [39, 119] },
  { name: 'Trail Running Shoes', category: 'outdoor', prefix: 'OUT', dollars: [89, 179] },
  { name: 'Insulated Water Bottle', category: 'outdoor', prefix: 'OUT', dollars: [19, 45] },
  { name: 'Packable Rain Jacket', category: 'outdoor', prefix: 'OUT', dollars: [69, 189] },
  { name: 'Headlamp', category: 'outdoor', prefix: 'OUT', dollars: [19, 69] },
  { name: 'Yoga Mat', category: 'fitness', prefix: 'FIT', dollars: [25, 99] },
  { name: 'Adjustable Dumbbell Set', category: 'fitness', prefix: 'FIT', dollars: [129, 349] },
  { name: 'Resistance Band Kit', category: 'fitness', prefix: 'FIT', dollars: [15, 49] },
  { name: 'Fountain Pen', category: 'stationery', prefix: 'STA', dollars: [29, 149] },
  { name: 'Dot Grid Notebook', category: 'stationery', prefix: 'STA', dollars: [12, 32] },
  { name: 'Desk Organizer', category: 'stationery', prefix: 'STA', dollars: [22, 65] },
];
