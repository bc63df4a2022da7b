// Owns the words and fixed tables the calendar world builds its seeded state
// from: names, meeting topics, project codenames, and the table of UTC offsets
// of every time zone the world knows for its seeded period.

/**
 * UTC offsets in minutes, fixed for the period the world covers
 * (SUPPORTED_FROM..SUPPORTED_UNTIL). No zone below changes its offset inside
 * that period: Europe moved to summer time on 2026-03-29, North America on
 * 2026-03-08, Sydney left summer time on 2026-04-05 and returns to it on
 * 2026-10-04; Sao Paulo, Kolkata, Singapore and Tokyo keep one offset all
 * year. A table, not the host's time zone database, so the world never depends
 * on the machine it runs on.
 */
export const ZONE_OFFSETS = {
  'America/Chicago': -300,
  'America/Los_Angeles': -420,
  'America/New_York': -240,
  'America/Sao_Paulo': -180,
  'Asia/Kolkata': 330,
  'Asia/Singapore': 480,
  'Asia/Tokyo': 540,
  'Australia/Sydney': 600,
  'Europe/Berlin': 120,
  'Europe/Helsinki': 180,
  'Europe/London': 60,
} as const;

export type ZoneName = keyof typeof ZONE_OFFSETS;
export const ZONE_NAMES = Object.keys(ZONE_OFFSETS).sort() as ZoneName[];

/** The span in which the offsets above hold; the tools refuse times outside it. */
export const SUPPORTED_FROM = '2026-04-06T00:00:00Z';
export const SUPPORTED_UNTIL = '2026-10-03T00:00:00Z';

/** The logical "now" of every seeded calendar: the Sunday evening before the seeded fortnight. */
export const NOW = '2026-04-12T18:00:00Z';

/** The weekdays (UTC dates) the seeded meetings fall on: two working weeks. */
export const SEEDED_DATES = [
  '2026-04-13',
  '2026-04-14',
  '2026-04-15',
  '2026-04-16',
  '2026-04-17',
  '2026-04-20',
  '2026-04-21',
  '2026-04-22',
  '2026-04-23',
  '2026-04-24',
] as const;

export const RESPONSES = ['accepted', 'declined', 'tentative', 'needs_action'] as const;
export type ResponseStatus = (typeof RESPONSES)[number];

/** Working days start at one of these local times and last WORKDAY_MINUTES. */
export const WORKDAY_STARTS = ['08:00', '08:30', '09:00', '09:30', '10:00'] as const;
export const WORKDAY_MINUTES = 8 * 60;

/** Local times a user may ask for in "at 10:30 their time". */
export const LOCAL_MEETING_TIMES = ['09:00', '09:30', '10:00', '10:30', '11:00', '13:30', '14:00', '14:30', '15:00'] as const;

export const MEETING_TOPICS = [
  'Roadmap review',
  'Budget sync',
  'Hiring debrief',
  'Vendor call',
  'Design critique',
  'Quarterly planning',
  'Incident retro',
  'Launch readiness',
  'Customer escalation',
  'Migration check-in',
  'Security review',
  'Pricing workshop',
  'Onboarding walkthrough',
  'Analytics deep dive',
] as const;

export const CODENAMES = [
  'Kestrel', 'Juniper', 'Halcyon', 'Saffron', 'Tundra', 'Meridian', 'Cobalt', 'Larch',
  'Osprey', 'Quartz', 'Bramble', 'Fjord', 'Lantern', 'Mistral', 'Pollen', 'Rookery',
] as const;

export const AGENDA_LINES = [
  'Agenda in the shared doc; bring open questions.',
  'Decisions needed before the end of the sprint.',
  'Please read the pre-read beforehand.',
  'Short status round, then open discussion.',
  'Dial-in details in the invitation.',
] as const;
