// Owns the words the issues world builds its seeded state from. Each topic word
// appears only in the titles of its own issues, so a search for a topic has a
// definite answer; a test holds the vocabulary to that rule.

export const TOPICS = [
  'login',
  'checkout',
  'export',
  'notifications',
  'billing',
  'upload',
  'sync',
  'dashboard',
  'webhooks',
  'permissions',
] as const;

export type Topic = (typeof TOPICS)[number];

/** Title tails per topic; the title is "<Topic>: <tail>". */
export const SYMPTOMS: Record<Topic, readonly string[]> = {
  login: [
    'redirect loop after password reset',
    'session cookie dropped on Safari 17',
    'SSO button stays disabled for invited users',
    'two-factor prompt shown twice',
  ],
  checkout: [
    'coupon total rounds down by one cent',
    'tax line missing for Norwegian addresses',
    'pay button stays spinning after card decline',
    'order summary repeats the shipping fee',
  ],
  export: [
    'CSV columns shift when locale is de-DE',
    'PDF report cuts the last table row',
    'XLSX file opens with broken dates',
    'large workspaces time out after 90 seconds',
  ],
  notifications: [
    'digest email arrives twice on Mondays',
    'mobile push ignores quiet hours',
    'unread badge never clears',
    'mention alerts skip archived threads',
  ],
  billing: [
    'invoice PDF shows the wrong VAT number',
    'prorated refund off by a day',
    'seat count not updated after downgrade',
    'receipt email lacks the company address',
  ],
  upload: [
    'progress bar freezes at 99 percent',
    'HEIC images rejected without a message',
    'files over 2 GB silently truncated',
    'drag and drop ignored in Firefox',
  ],
  sync: [
    'calendar entries duplicated after reconnect',
    'offline edits lost on conflict',
    'background job retries forever',
    'deleted folders come back after an hour',
  ],
  dashboard: [
    'chart legend overlaps the axis labels',
    'date picker resets the saved filter',
    'widgets load in a random order',
    'empty state shows a stale total',
  ],
  webhooks: [
    'signature header missing on retries',
    'payload omits the actor field',
    'delivery log paginates past the end',
    'disabled endpoints still receive events',
  ],
  permissions: [
    'guests can read private boards',
    'role change needs a full reload',
    'owners cannot remove themselves',
    'audit log hides admin grants',
  ],
};

export const LABELS = [
  'bug',
  'enhancement',
  'question',
  'docs',
  'security',
  'performance',
  'regression',
  'good-first-issue',
] as const;

export const KIND_LABELS = ['bug', 'enhancement', 'question'] as const;
export const EXTRA_LABELS = ['docs', 'security', 'performance', 'regression', 'good-first-issue'] as const;

export const PRIORITIES = ['p0', 'p1', 'p2', 'p3'] as const;
export const CLOSE_REASONS = ['completed', 'not_planned', 'duplicate'] as const;

export const REPOSITORIES = ['atlas', 'lumen', 'keel', 'orbit', 'tessera', 'quarry'] as const;

export const BODY_OPENINGS = [
  'Reported by a customer on the enterprise plan.',
  'Seen during the staging smoke test.',
  'Reproducible on every attempt so far.',
  'Happens intermittently, roughly one time in five.',
  'Found while reviewing the release checklist.',
] as const;

export const COMMENT_BODIES = [
  'I can reproduce this on the current main branch.',
  'Could this be related to the cache change last sprint?',
  'Added a screenshot to the internal ticket.',
  'Raising priority: two more customers asked about it.',
  'Workaround for now: clear the local storage and retry.',
] as const;
