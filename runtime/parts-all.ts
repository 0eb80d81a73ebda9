/**
 * Registers every daemon part, in start order (each import adds itself to PARTS), and installs every
 * resource kind of the config repo (kinds-all.ts).
 */
import './resources/part.js';
import './txt/part.js';
import './redirect/part.js';
import './demo/part.js';
import './metrics/part.js';
import './license/part.js';
import './auth/part.js';
import './ui/part.js';
// canary apply extends config sync: registered before the cluster part sets it up
import '../gitops/canary/part.js';
import './cluster/part.js';
import './health/part.js';
import './dns/part.js';
import './rum/part.js';
import './bgp/part.js';
import './ws/part.js';
import './mail/part.js';
import './forms/part.js';
import './alerts/part.js';
import '../gitops/part.js';
import './backup/part.js';
// every resource kind of the config repo, for the GitOps loader and validator
import './kinds-all.js';
