import { PARTS } from '../parts.js';

/** The cluster part (placeholder until it is built). */
PARTS.push({ name: 'cluster' });
