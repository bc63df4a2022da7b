// Owns the words the tasks world builds its seeded state from: project names,
// task phrases, checklist items, tags and people. Checklist items are chosen so
// that none appears as a whole phrase inside another, so an answer that names
// one item never seems to name a second; a test holds the vocabulary to that.

export const STATUSES = ['todo', 'doing', 'done'] as const;
export const OPEN_STATUSES = ['todo', 'doing'] as const;
export const PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;

/** Project keys; a project's display name is "<Key> <purpose>". */
export const PROJECT_KEYS = [
  'KESTREL',
  'MERIDIAN',
  'HALCYON',
  'TUNDRA',
  'SAFFRON',
  'CORVID',
  'LANTERN',
  'OBSIDIAN',
  'QUARTZ',
  'BRAMBLE',
] as const;

export const PROJECT_PURPOSES = ['relaunch', 'migration', 'rollout', 'audit', 'redesign', 'expansion', 'cleanup'] as const;

/** Task titles are "<phrase> <4 hex digits>", so every title is unique and unguessable. */
export const TASK_PHRASES = [
  'Renew the TLS certificate',
  'Draft the onboarding email',
  'Review the vendor contract',
  'Migrate the staging database',
  'Update the pricing page',
  'Write the incident postmortem',
  'Plan the quarterly offsite',
  'Audit the access logs',
  'Prepare the board deck',
  'Fix the flaky login test',
  'Translate the help center',
  'Order replacement laptops',
  'Schedule the security training',
  'Clean up unused feature flags',
  'Rotate the API keys',
  'Benchmark the search service',
  'Refresh the brand guidelines',
  'Reconcile the supplier invoices',
  'Archive the old wiki pages',
  'Interview the design candidates',
  'Set up the status page',
  'Document the deploy process',
  'Negotiate the office lease',
  'Test the backup restore',
  'Sketch the mobile checkout',
  'Collect customer interview notes',
  'Upgrade the CI runners',
  'Publish the changelog',
  'Localise the invoice template',
  'Tune the alert thresholds',
  'Record the product demo',
  'Replace the payment gateway SDK',
] as const;

export const CHECKLIST_ITEMS = [
  'Gather requirements',
  'Get sign-off from legal',
  'Book a meeting room',
  'Share the draft',
  'Collect feedback',
  'Update the tracker',
  'Notify the stakeholders',
  'Run the smoke tests',
  'Attach screenshots',
  'Confirm the budget',
  'Ping the on-call engineer',
  'Write a summary',
  'Review with the team lead',
  'Export the final report',
] as const;

/** Ordinary tags, spread at random. */
export const TAGS = ['frontend', 'backend', 'design', 'docs', 'ops', 'finance', 'legal', 'research', 'hiring', 'security'] as const;

/**
 * Flag tags: each world uses two, and each of those is on exactly two open
 * tasks and one done task, so "every open task tagged X" has a definite answer
 * and a done distractor.
 */
export const FLAG_TAGS = ['blocker', 'escalated', 'hotfix', 'customer-visible'] as const;
