//! Prepaid wallets holding an amount in cents, with a transaction history.
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum WalletError {
    InsufficientFunds { balance: u64, requested: u64 },
    ZeroAmount,
    Frozen,
}

impl fmt::Display for WalletError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WalletError::InsufficientFunds { balance, requested } => {
                write!(f, "insufficient funds: balance {balance}, requested {requested}")
            }
            WalletError::ZeroAmount => write!(f, "amount must be positive"),
            WalletError::Frozen => write!(f, "wallet is frozen"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Deposit(u64),
    Withdrawal(u64),
}

#[derive(Debug, Default)]
pub struct Wallet {
    balance: u64,
    frozen: bool,
    history: Vec<Entry>,
}

impl Wallet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn balance(&self) -> u64 {
        self.balance
    }

    pub fn history(&self) -> &[Entry] {
        &self.history
    }

    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    pub fn deposit(&mut self, cents: u64) -> Result<u64, WalletError> {
        if cents == 0 {
            return Err(WalletError::ZeroAmount);
        }
        if self.frozen {
            return Err(WalletError::Frozen);
        }
        self.balance += cents;
        self.history.push(Entry::Deposit(cents));
        Ok(self.balance)
    }

    pub fn withdraw(&mut self, cents: u64) -> Result<u64, WalletError> {
        if cents == 0 {
            return Err(WalletError::ZeroAmount);
        }
        if self.frozen {
            return Err(WalletError::Frozen);
        }
        let remaining = self.balance - cents;
        self.balance = remaining;
        self.history.push(Entry::Withdrawal(cents));
        Ok(self.balance)
    }

    /// Moves money between wallets; nothing changes when it fails.
    pub fn transfer(&mut self, to: &mut Wallet, cents: u64) -> Result<(), WalletError> {
        if to.frozen {
            return Err(WalletError::Frozen);
        }
        self.withdraw(cents)?;
        to.deposit(cents).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deposit_and_withdraw() {
        let mut w = Wallet::new();
        w.deposit(500).unwrap();
        assert_eq!(w.withdraw(200), Ok(300));
        assert_eq!(w.history(), &[Entry::Deposit(500), Entry::Withdrawal(200)]);
    }

    #[test]
    fn overdraw_is_an_error_and_changes_nothing() {
        let mut w = Wallet::new();
        w.deposit(100).unwrap();
        assert_eq!(w.withdraw(150), Err(WalletError::InsufficientFunds { balance: 100, requested: 150 }));
        assert_eq!(w.balance(), 100);
        assert_eq!(w.history().len(), 1);
    }

    #[test]
    fn failed_transfer_keeps_both_balances() {
        let mut a = Wallet::new();
        let mut b = Wallet::new();
        a.deposit(50).unwrap();
        assert!(a.transfer(&mut b, 80).is_err());
        assert_eq!((a.balance(), b.balance()), (50, 0));
    }

    #[test]
    fn frozen_wallet_rejects() {
        let mut w = Wallet::new();
        w.freeze();
        assert_eq!(w.deposit(1), Err(WalletError::Frozen));
    }
}
