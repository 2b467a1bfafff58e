/**
 * The experiments' `fedmix` commands, in the order `fedmix help` lists them;
 * the CLI (ts/cli/main.ts) adds the commands that are not an experiment
 * (server, client). Each comes from its experiment's folder
 * (ts/experiments/<algorithm>/command.ts).
 *
 * Apart from the fedmix/experiments entry (./index.ts), which lists the
 * experiments' runners: the commands are Node only (they read files, start
 * brokers, write reports), and pages bundle that entry (demo/).
 */
import type { NamedCommand } from '../cli/command.js';
import { communitiesCommand } from './communities/command.js';
import { feddistrCommand } from './feddistr/command.js';
import { fedgemCommand } from './fedgem/command.js';
import { experimentCommand } from './fedgengmm/command.js';
import { demoCommand } from './fedgengmm/demo.js';
import { mdmCommands } from './mdm/command.js';

export const EXPERIMENT_COMMANDS: readonly NamedCommand[] = [demoCommand, experimentCommand, ...mdmCommands, fedgemCommand, communitiesCommand, feddistrCommand];
