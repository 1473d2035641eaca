/**
 * The registry of bench cases, run in this order after the baseline. Add a group as a file of its own
 * exporting a BenchCase[] and list it here. The list scale cases come last: their million rows reach
 * serving through the change feed, and a serving case run after them would wait for it to catch up. The bad-key flood comes after everything that makes new keys.
 */
import type { BenchCase } from '../harness';
import { adItemCases } from './ad-items';
import { costCases } from './costs';
import { edgeCases, floodCases } from './edge';
import { listScaleCases } from './list-scale';
import { servingCases } from './serving';
import { stackFloorCases } from './stack-floor';

export const CASES: BenchCase[] = [...adItemCases, ...edgeCases, ...costCases, ...servingCases, ...stackFloorCases, ...listScaleCases, ...floodCases];
