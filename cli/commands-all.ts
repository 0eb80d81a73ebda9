/** Registers every gslbctl command. */
import './validate-config.js';
import './gitops-commands.js';
import './wait.js';
import './apikey-commands.js';
import './completion.js';
import './backup-commands.js';
import './license-commands.js';
import './dnssec-commands.js';
