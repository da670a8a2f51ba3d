import SigilCore
