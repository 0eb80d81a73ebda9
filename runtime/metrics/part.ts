import { PARTS } from '../parts.js';

/** The metrics part (placeholder until it is built). */
PARTS.push({ name: 'metrics' });
