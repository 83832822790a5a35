/** The 18 groups of the reference (CONTRACT.md), one OpenAPI tag each. */
export const API_TAGS: { name: string; description: string }[] = [
  {
    name: 'Developer',
    description: 'Accounts, sessions, API keys, request signing, MFA, developer terms',
  },
  { name: 'Markets', description: 'Binary markets, order books and trades' },
  { name: 'Orders', description: 'Place, amend, cancel and export orders' },
  { name: 'Positions', description: 'Netted positions per market' },
  { name: 'Wallet', description: 'Balances, ledger, deposits and withdrawals' },
  { name: 'Users', description: 'User profiles' },
  { name: 'Comments', description: 'Market comments' },
  { name: 'Watchlists', description: 'Watchlists of markets' },
  { name: 'Notifications', description: 'In-app notifications' },
  {
    name: 'Webhooks',
    description:
      'Developer webhook endpoints, deliveries and health. Delivery is at least once: the events of an acknowledged order are stored with it and survive a crash; deduplicate on the event id.',
  },
  { name: 'Sports', description: 'Sports market data' },
  { name: 'Crypto', description: 'Crypto market data' },
  { name: 'Data', description: 'Historical dataset exports and usage' },
  { name: 'Indices', description: 'Market indices' },
  { name: 'Rank', description: 'Leaderboards and rank history' },
  { name: 'RFQ', description: 'Requests for quote and binding quotes' },
  { name: 'Sandbox', description: 'Paper-world controls for test keys and test fixtures' },
  { name: 'Meta', description: 'The contract, the changelog and service health' },
];
