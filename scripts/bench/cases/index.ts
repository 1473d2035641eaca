/**
 * The registry of bench cases, run in this order after the baseline. Add a group as a file of its own
 * exporting a BenchCase[] and list it here.
 */
import type { BenchCase } from '../harness';
import { adItemCases } from './ad-items';
import { costCases } from './costs';
import { edgeCases } from './edge';
import { listScaleCases } from './list-scale';
import { servingCases } from './serving';
import { stackFloorCases } from './stack-floor';

export const CASES: BenchCase[] = [...adItemCases, ...edgeCases, ...costCases, ...listScaleCases, ...servingCases, ...stackFloorCases];
