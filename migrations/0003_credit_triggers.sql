-- Credits move only through credit_charges: a charge row takes them, deleting it (a refund) gives them back.
-- The charge is inserted only while the balance covers it, and accounts.credits has a CHECK >= 0 besides.
CREATE TRIGGER `credit_charges_take` AFTER INSERT ON `credit_charges`
BEGIN
  UPDATE `accounts` SET `credits` = `credits` - NEW.`amount` WHERE `id` = NEW.`account_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `credit_charges_refund` AFTER DELETE ON `credit_charges`
BEGIN
  UPDATE `accounts` SET `credits` = `credits` + OLD.`amount` WHERE `id` = OLD.`account_id`;
END;
