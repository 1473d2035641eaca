import { envInt } from './config';

/** The creative kinds that take an uploaded file. */
export type UploadKind = 'image_creative' | 'video_creative' | 'audio_creative' | 'rich_media_creative';

/** What a file's first bytes say it is, before the kind decides the media type (an `ftyp` box is video or audio). */
type Container = 'png' | 'jpeg' | 'gif' | 'webp' | 'svg' | 'ftyp' | 'webm' | 'ogg' | 'mp3' | 'aac' | 'wav' | 'zip';

/** Per kind: the containers it accepts, as the media type the file is then served with. */
const ACCEPTED: Record<UploadKind, Partial<Record<Container, string>>> = {
  image_creative: { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml' },
  video_creative: { ftyp: 'video/mp4', webm: 'video/webm', ogg: 'video/ogg' },
  audio_creative: { mp3: 'audio/mpeg', aac: 'audio/aac', ftyp: 'audio/mp4', ogg: 'audio/ogg', wav: 'audio/wav' },
  rich_media_creative: { zip: 'application/zip' },
};

/** What each kind accepts, in words for error messages. */
export const ACCEPTED_FORMATS: Record<UploadKind, string> = {
  image_creative: 'PNG, JPEG, GIF, WebP or SVG',
  video_creative: 'MP4, WebM or Ogg',
  audio_creative: 'MP3, AAC/M4A, Ogg or WAV',
  rich_media_creative: 'ZIP',
};

/** File name extension of every media type an upload can be stored as (the stored name ends with it). */
export const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/ogg': 'ogv',
  'audio/mpeg': 'mp3',
  'audio/aac': 'aac',
  'audio/mp4': 'm4a',
  'audio/ogg': 'ogg',
  'audio/wav': 'wav',
  'application/zip': 'zip',
};

/** Largest upload accepted (CREATIVE_UPLOAD_MAX_BYTES, default 50 MB). */
export function uploadMaxBytes(): number {
  return envInt('CREATIVE_UPLOAD_MAX_BYTES', 50 * 1024 * 1024, 1);
}

const ascii = (b: Buffer, start: number, end: number) => b.subarray(start, end).toString('latin1');

/** The container the bytes start with, by their magic numbers (a declared content type is not trusted). */
function containerOf(b: Buffer): Container | undefined {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) return 'gif';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'webp';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WAVE') return 'wav';
  // ISO base media (MP4, M4A): the first box is `ftyp`.
  if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp') return 'ftyp';
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (b.length >= 4 && ascii(b, 0, 4) === 'OggS') return 'ogg';
  if (b.length >= 4 && ascii(b, 0, 2) === 'PK' && ((b[2] === 3 && b[3] === 4) || (b[2] === 5 && b[3] === 6))) return 'zip';
  if (b.length >= 3 && ascii(b, 0, 3) === 'ID3') return 'mp3';
  if (b.length >= 2 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0) {
    // A frame sync: layer bits 00 are AAC's ADTS header, any other layer is MPEG audio (MP3).
    return (b[1] & 0x06) === 0 ? 'aac' : 'mp3';
  }
  if (looksLikeSvg(b)) return 'svg';
  return undefined;
}

/** Text whose first element (after an XML declaration, comments or a doctype) is `<svg`. */
function looksLikeSvg(b: Buffer): boolean {
  let head = b.subarray(0, 4096).toString('utf8').replace(/^\uFEFF/, '');
  for (;;) {
    head = head.trimStart();
    const skip = /^(<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)/i.exec(head);
    if (!skip) break;
    head = head.slice(skip[0].length);
  }
  return /^<svg[\s>]/.test(head);
}

/** The media type to store and serve `bytes` with as a `kind`, or undefined when the kind does not take that format. */
export function sniffMediaType(kind: UploadKind, bytes: Buffer): string | undefined {
  const container = containerOf(bytes);
  return container ? ACCEPTED[kind][container] : undefined;
}

/** Pixel size of a PNG or GIF from its header (other formats need more parsing than is worth here). */
export function imageSize(bytes: Buffer, mediaType: string): { width: number; height: number } | undefined {
  if (mediaType === 'image/png' && bytes.length >= 24 && ascii(bytes, 12, 16) === 'IHDR') return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (mediaType === 'image/gif' && bytes.length >= 10) return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  return undefined;
}
