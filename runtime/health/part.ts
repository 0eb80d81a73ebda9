import { PARTS } from '../parts.js';

/** The health part (placeholder until it is built). */
PARTS.push({ name: 'health' });
