import { apiErrors } from './errors';
import express, { type Request, type RequestHandler } from 'express';
import { isUploadRequest } from './multipart';

/**
 * The first member name that appears twice in one object of a JSON text, or undefined. JSON.parse keeps
 * the last value of a repeated member silently; the API refuses such a body instead of guessing which
 * value the caller meant. Malformed text yields undefined: the parser that follows reports it.
 */
export function duplicateMember(text: string): string | undefined {
  type Frame = { keys?: Set<string>; expectKey: boolean };
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          return undefined;
        }
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === '{') stack.push({ keys: new Set(), expectKey: true });
    else if (c === '[') stack.push({ expectKey: false });
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.keys) top.expectKey = true;
    }
    i++;
  }
  return undefined;
}

export const DUPLICATE_MEMBER = 'entity.duplicate_member';

/** What the app answers for a body with a repeated member named `name`. */
export function duplicateMemberError(name: string) {
  return apiErrors.invalid([{ field: name, type: 'invalid_value', message: `'${name}' is given more than once in the body; give each member once.` }]);
}

/**
 * The API's JSON body parser (every content type is read as JSON, except the multipart forms of the
 * creative upload routes, which read their own body), refusing repeated members with 400.
 */
export function jsonBody(limit: string): RequestHandler {
  return express.json({
    limit,
    type: (req) => !isUploadRequest(req as Request),
    strict: false,
    verify: (_req, _res, buf) => {
      const name = duplicateMember(buf.toString('utf8'));
      // body-parser decorates what verify throws (it sets `body` and `status` on it), so this throws a
      // plain error that the app's error handler turns into the API's 400.
      if (name !== undefined) throw Object.assign(new Error(name.slice(0, 64)), { type: DUPLICATE_MEMBER });
    },
  });
}
