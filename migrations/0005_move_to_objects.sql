-- Balances and chat lists moved into Durable Objects (AccountLedger, ProjectChats), which read these legacy rows once; sign-in attempts are counted by the SignInThrottle object.
DROP TABLE `sign_in_failures`;--> statement-breakpoint
CREATE INDEX `credit_charges_by_account` ON `credit_charges` (`account_id`,`charged_at`);
