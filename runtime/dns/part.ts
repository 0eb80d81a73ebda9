import { PARTS } from '../parts.js';

/** The dns part (placeholder until it is built). */
PARTS.push({ name: 'dns' });
