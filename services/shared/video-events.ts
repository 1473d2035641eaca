import type { VideoTotals } from '../../proto/gen/adserver/reporting/v1/reports';

/**
 * The VAST tracking events reporting counts (events.proto's `video_event`). Each name is also its
 * VideoTotals field, so ingest validation and the reports read one list.
 */
export const VIDEO_EVENTS = [
  'creativeView', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'progress', 'mute', 'unmute', 'pause', 'resume',
  'rewind', 'skip', 'close', 'closeLinear', 'fullscreen', 'exitFullscreen', 'expand', 'collapse', 'acceptInvitationLinear',
  'companionView1', 'companionView2', 'companionView3', 'companionView4', 'companionView5',
  'companionClick1', 'companionClick2', 'companionClick3', 'companionClick4', 'companionClick5',
  'nonLinearCreativeView', 'nonLinearClick',
] as const satisfies readonly Exclude<keyof VideoTotals, 'completionRate'>[];

export type VideoEvent = (typeof VIDEO_EVENTS)[number];

const NAMES = new Set<string>(VIDEO_EVENTS);
export const isVideoEvent = (name: string): name is VideoEvent => NAMES.has(name);

/** Counts per event name as VideoTotals, with the completion rate against `impressions`. */
export function videoTotals(counts: ReadonlyMap<string, number>, impressions: number): VideoTotals {
  const out = Object.fromEntries(VIDEO_EVENTS.map((e) => [e, counts.get(e) ?? 0])) as Record<VideoEvent, number>;
  // A lost impression beacon could let completes outnumber impressions: the rate stays a share.
  return { ...out, completionRate: impressions > 0 ? Math.min(1, Math.round((out.complete / impressions) * 10_000) / 10_000) : 0 };
}
