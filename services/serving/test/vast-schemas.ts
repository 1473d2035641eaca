import fs from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import type { VastVersion } from '../vast';

/** The IAB's published schema of each VAST version (fixtures/vast/, see SOURCE.md there). */
const SCHEMAS: Record<VastVersion, string> = { '2.0': 'vast_2.0.1.xsd', '3.0': 'vast3_draft.xsd', '4.2': 'vast_4.2.xsd' };
const schema = (v: VastVersion) => fs.readFileSync(path.join(__dirname, 'fixtures/vast', SCHEMAS[v]), 'utf8').replace(/^\uFEFF/, '');

/**
 * Valid against the version's schema once the player's macros are filled, as a player fills them
 * before calling any URL: VAST writes macros in square brackets, which libxml2's xs:anyURI check
 * (RFC 3986) refuses as they stand.
 */
export async function expectValid(version: VastVersion, xml: string): Promise<void> {
  const filled = xml.replace(/\[([A-Z_]+)\]/g, '0');
  const result = await validateXML({ xml: [{ fileName: `ad-${version}.xml`, contents: filled }], schema: [schema(version)] });
  if (!result.valid) throw new Error(`VAST ${version} is not valid against ${SCHEMAS[version]}:\n${result.rawOutput}\n${xml}`);
}
