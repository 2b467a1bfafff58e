/**
 * The built-in algorithms, in the order the CLI and error messages list them:
 * the one file outside the algorithms' folders that names them all.
 */
import { communities } from '../communities/descriptor.js';
import { dem } from '../dem/descriptor.js';
import { fedavg, fedprox, scaffold } from '../fedavg/descriptor.js';
import { feddistr } from '../feddistr/descriptor.js';
import { fedgem } from '../fedgem/descriptor.js';
import { fedgengmm } from '../fedgengmm/descriptor.js';
import { mdm } from '../mdm/descriptor.js';

export const BUILT_IN = [fedgengmm, dem, fedgem, mdm, fedavg, fedprox, scaffold, communities, feddistr] as const;

/** The built-in algorithms' names. */
export type AlgorithmName = 'fedgengmm' | 'dem' | 'fedgem' | 'mdm' | 'fedavg' | 'fedprox' | 'scaffold' | 'communities' | 'feddistr';

// the compiler checks that the union and the list name the same algorithms
type ListedName = (typeof BUILT_IN)[number]['name'];
export const SAME_NAMES: [AlgorithmName, ListedName] extends [ListedName, AlgorithmName] ? true : never = true;
